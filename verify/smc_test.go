//go:build cgo

package verify

import (
	"reflect"
	"testing"

	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/sframe"
)

// Self-modifying guests: each rewrites a call site inside a loop of 400
// passes (RWX segment), all within one batch of DefaultBatch instructions.
// Their SFrame data is right: every instruction must check ok.
var smcGuests = []struct {
	name  string
	a     *arch.Arch
	code  string
	funcs []guestFunc
}{
	{
		// The call's target alternates between f (a frame-pointer frame)
		// and g (an SP-based one).
		name: "x86-64/target", a: arch.AMD64, code: `
bb90010000     // _start: mov ebx, 400
488d3d1f000000 // 1: lea rdi, [rip+site]
488d0d2a000000 // lea rcx, [rip+f]
488d1529000000 // lea rdx, [rip+g]
f6c301         // test bl, 1
480f44ca       // cmovz rcx, rdx
488d7705       // lea rsi, [rdi+5]
4829f1         // sub rcx, rsi
894f01         // mov [rdi+1], ecx: the call's rel32
e80d000000     // site: call f
ffcb           // dec ebx
75d1           // jnz 1b
31ff           // xor edi, edi
b8e7000000     // mov eax, 231
0f05           // syscall (exit_group)
55             // f: push rbp
4889e5         // mov rbp, rsp
5d             // pop rbp
c3             // ret
4883ec18       // g: sub rsp, 24
4883c418       // add rsp, 24
c3             // ret
`, funcs: []guestFunc{
			{"_start", 0, 0x3d, []sframe.FRE{outermostRow()}},
			{"f", 0x3d, 6, []sframe.FRE{spRow(0, 8), spRow(1, 16, -16), fpRow(4, 16, -16), spRow(5, 8)}},
			{"g", 0x43, 9, []sframe.FRE{spRow(0, 8), spRow(4, 32), spRow(8, 8)}},
		},
	},
	{
		// The call becomes a mov and back: odd passes call f, even ones
		// (the first) do not. The store and the call are in one
		// translation block (Unicorn restarts at the store).
		name: "x86-64/opcode", a: arch.AMD64, code: `
bb90010000     // _start: mov ebx, 400
488d3d12000000 // 1: lea rdi, [rip+site]
b8e8000000     // mov eax, 0xe8 (call rel32)
b9b8000000     // mov ecx, 0xb8 (mov eax, imm32)
f6c301         // test bl, 1
0f44c1         // cmovz eax, ecx
8807           // mov [rdi], al: the opcode at site
e80d000000     // site: call f
ffcb           // dec ebx
75de           // jnz 1b
31ff           // xor edi, edi
b8e7000000     // mov eax, 231
0f05           // syscall (exit_group)
55             // f: push rbp
4889e5         // mov rbp, rsp
5d             // pop rbp
c3             // ret
`, funcs: []guestFunc{
			{"_start", 0, 0x30, []sframe.FRE{outermostRow()}},
			{"f", 0x30, 6, []sframe.FRE{spRow(0, 8), spRow(1, 16, -16), fpRow(4, 16, -16), spRow(5, 8)}},
		},
	},
	{
		// The same across translation blocks: a jmp ends the storing one.
		name: "x86-64/opcode-jmp", a: arch.AMD64, code: `
bb90010000     // _start: mov ebx, 400
488d3d14000000 // 1: lea rdi, [rip+site]
b8e8000000     // mov eax, 0xe8 (call rel32)
b9b8000000     // mov ecx, 0xb8 (mov eax, imm32)
f6c301         // test bl, 1
0f44c1         // cmovz eax, ecx
8807           // mov [rdi], al: the opcode at site
eb00           // jmp site
e80d000000     // site: call f
ffcb           // dec ebx
75dc           // jnz 1b
31ff           // xor edi, edi
b8e7000000     // mov eax, 231
0f05           // syscall (exit_group)
55             // f: push rbp
4889e5         // mov rbp, rsp
5d             // pop rbp
c3             // ret
`, funcs: []guestFunc{
			{"_start", 0, 0x32, []sframe.FRE{outermostRow()}},
			{"f", 0x32, 6, []sframe.FRE{spRow(0, 8), spRow(1, 16, -16), fpRow(4, 16, -16), spRow(5, 8)}},
		},
	},
	{
		// bl f becomes a nop and back: odd passes call f.
		name: "aarch64/opcode", a: arch.ARM64, code: `
13328052 // _start: mov w19, #400
14010010 // adr x20, site
960240b9 // ldr w22, [x20]: bl f
f5038452 // mov w21, #0x201f
75a0ba72 // movk w21, #0xd503, lsl #16: nop
7f020072 // 1: tst w19, #1
c012951a // csel w0, w22, w21, ne
800200b9 // str w0, [x20]
df3f03d5 // isb
06000094 // site: bl f
73060071 // subs w19, w19, #1
41ffff54 // b.ne 1b
000080d2 // mov x0, #0
c80b80d2 // mov x8, #94
010000d4 // svc #0 (exit_group)
fd7bbfa9 // f: stp x29, x30, [sp, #-16]!
fd030091 // mov x29, sp
fd7bc1a8 // ldp x29, x30, [sp], #16
c0035fd6 // ret
`, funcs: []guestFunc{
			{"_start", 0, 0x3c, []sframe.FRE{outermostRow()}},
			{"f", 0x3c, 0x10, []sframe.FRE{spRow(0, 0), spRow(4, 16, -8, -16), fpRow(8, 16, -8, -16), spRow(0xc, 0)}},
		},
	},
}

// TestSelfModifyingCode: checking in batches (memory replayed per record)
// and one instruction at a time report the same on code that rewrites a
// call inside a batch, and both find every instruction right: the shadow
// stack classifies a rewritten instruction again (a store into code is
// handed to shadow.Stack.Invalidate at the record after it).
func TestSelfModifyingCode(t *testing.T) {
	for _, g := range smcGuests {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			path := guestELF(t, g.a, guestCode(t, g.code), g.funcs, true)
			run := func(batch int) *Report {
				rep, err := Run(path, Options{Batch: batch})
				if err != nil {
					t.Fatal(err)
				}
				rep.Seconds = 0
				return rep
			}
			exact, batched := run(1), run(DefaultBatch)
			if !reflect.DeepEqual(exact, batched) {
				t.Errorf("reports differ:\nexact   %+v\nbatched %+v", exact, batched)
			}
			for _, rep := range []*Report{exact, batched} {
				if !rep.OK() || rep.Counts["ok"] != rep.Instructions || rep.Instructions < 3000 {
					t.Errorf("%s: %d instructions, %v, verdict %s", rep.Stop, rep.Instructions, rep.Counts, rep.Verdict())
				}
			}
			t.Logf("%d instructions, %v", exact.Instructions, exact.Counts)
		})
	}
}
