//go:build cgo

package verify

import (
	"bytes"
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/sframe"
)

// deniedGuests call socket twice and connect once, which the sandbox
// denies (EACCES), and exit with the errno socket returned (13).
var deniedGuests = map[*arch.Arch]string{
	arch.AMD64: `
		bf02000000 be01000000 31d2 b829000000 0f05 // mov edi,2; mov esi,1; xor edx,edx; mov eax,41; syscall
		bf02000000 be01000000 31d2 b829000000 0f05 // (again)
		4989c4                                     // mov r12,rax
		bf03000000 31f6 31d2 b82a000000 0f05       // mov edi,3; xor esi,esi; xor edx,edx; mov eax,42; syscall
		4c89e7 48f7df b8e7000000 0f05              // mov rdi,r12; neg rdi; mov eax,231; syscall`,
	arch.ARM64: `
		400080d2 210080d2 020080d2 c81880d2 010000d4 // mov x0,#2; mov x1,#1; mov x2,#0; mov x8,#198; svc #0
		400080d2 210080d2 020080d2 c81880d2 010000d4 // (again)
		f30300aa                                     // mov x19,x0
		600080d2 010080d2 020080d2 681980d2 010000d4 // mov x0,#3; mov x1,#0; mov x2,#0; mov x8,#203; svc #0
		e00313cb c80b80d2 010000d4                   // neg x0,x19; mov x8,#94; svc #0`,
}

// execveGuests call execve("/proc/self/exe", 0, 0), which stops the run:
// the file is there and executable.
var execveGuests = map[*arch.Arch]string{
	arch.AMD64: `488d3d12000000 31f6 31d2 b83b000000 0f05 // lea rdi,[rip+0x12]; xor esi,esi; xor edx,edx; mov eax,59; syscall
		b8e7000000 0f05                                 // mov eax,231; syscall
		2f70726f632f73656c662f65786500                  // "/proc/self/exe"`,
	arch.ARM64: `e0000010 010080d2 020080d2 a81b80d2 010000d4 // adr x0,#28; mov x1,#0; mov x2,#0; mov x8,#221; svc #0
		c80b80d2 010000d4                            // mov x8,#94; svc #0
		2f70726f632f73656c662f65786500               // "/proc/self/exe"`,
}

// TestDeniedReport: the report lists the calls the sandbox denied, in the
// text summary and the JSON; the run is complete.
func TestDeniedReport(t *testing.T) {
	for _, a := range []*arch.Arch{arch.AMD64, arch.ARM64} {
		code := guestCode(t, deniedGuests[a])
		path := guestELF(t, a, code, []guestFunc{{name: "_start", size: uint32(len(code)), fres: []sframe.FRE{outermostRow()}}}, false)
		rep, err := Run(path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]uint64{"socket": 2, "connect": 1}
		if !rep.OK() || !rep.Exited || rep.ExitStatus != 13 || !maps.Equal(rep.Denied, want) {
			t.Errorf("%s: %s, status %d, denied %v, verdict %s", a.Name, rep.Stop, rep.ExitStatus, rep.Denied, rep.Verdict())
		}
		var text bytes.Buffer
		rep.WriteText(&text, 10)
		if line := "\n  denied:       socket 2, connect 1 (sandbox: EACCES)\n"; !strings.Contains(text.String(), line) {
			t.Errorf("%s: text report lacks %q:\n%s", a.Name, line, text.String())
		}
		data, err := json.Marshal(rep)
		if err != nil {
			t.Fatal(err)
		}
		var back struct {
			Denied map[string]uint64 `json:"denied"`
		}
		if err := json.Unmarshal(data, &back); err != nil || !maps.Equal(back.Denied, want) {
			t.Errorf("%s: JSON denied %v (%v)", a.Name, back.Denied, err)
		}
	}
}

// TestExecveStops: execve cannot be emulated honestly: the run stops,
// naming the call, and is incomplete; nothing was denied.
func TestExecveStops(t *testing.T) {
	for _, a := range []*arch.Arch{arch.AMD64, arch.ARM64} {
		code := guestCode(t, execveGuests[a])
		path := guestELF(t, a, code, []guestFunc{{name: "_start", size: uint32(len(code)), fres: []sframe.FRE{outermostRow()}}}, false)
		rep, err := Run(path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Complete || !strings.Contains(rep.Incomplete, "unsupported system call") || !strings.Contains(rep.Stop, "execve of ") || rep.Denied != nil {
			t.Errorf("%s: stop %q, incomplete %q, denied %v", a.Name, rep.Stop, rep.Incomplete, rep.Denied)
		}
		var text bytes.Buffer
		rep.WriteText(&text, 10)
		if strings.Contains(text.String(), "denied:") {
			t.Errorf("%s: a denied line without denials:\n%s", a.Name, text.String())
		}
		data, _ := json.Marshal(rep)
		if bytes.Contains(data, []byte(`"denied"`)) {
			t.Errorf("%s: JSON has denied without denials", a.Name)
		}
	}
}
