// Package shadow keeps the true call stack of a guest program by watching
// every instruction it executes: the ground truth SFrame unwinds are
// compared with. It is pure Go; the emulator feeds it one Record per
// instruction.
//
// A [Frame] is pushed at every call instruction (x86-64 call; AArch64 bl,
// blr, blraa, blrab, blraaz, blrabz) and popped at the return that comes
// back to it (x86-64 ret; AArch64 ret, retaa, retab). For a frame created
// by a call instruction at address S of length L, executed with stack
// pointer SP and frame pointer FP (rbp / x29) before it ran:
//
//   - Return address (RA) = S + L: where the callee returns. On x86-64 it is
//     the value the call pushed at CFA-8; on AArch64 the value the call put
//     in x30 (the callee may sign it; the truth is the unsigned address).
//   - CFA (canonical frame address) = SP before the call. On x86-64 that is
//     the address just above the pushed return address (the callee's SP at
//     entry is CFA-8); on AArch64 the callee's SP at entry equals the CFA.
//     This is the DWARF/SFrame CFA of the callee, and the caller's SP after
//     the callee returns.
//   - Caller's FP = FP before the call: the value the callee must restore
//     (the "FP" an unwinder recovers for the caller's frame).
//
// Returns to another frame's return address (skipping frames) and returns
// to an address no frame expects are reported as [Anomaly] values, never a
// crash; a return no frame expects is a jump (push and ret, a retpoline,
// libgcc entering a landing pad): it pops no frame, the stack pointer
// rule below drops those it leaves. Frames the stack pointer has left without a return (longjmp, C++
// exception unwinding) are dropped: on x86-64 when SP >= CFA; on AArch64
// when SP > CFA, or — right after an indirect branch (br, as longjmp ends
// and libgcc enters a landing pad) or an unexpected return, with SP at the
// top frame's CFA — when the branch lands in the function a frame returns
// to (that frame and those above it are dropped; with symbols; without
// them, when x30, PAC stripped, no longer holds the frame's return
// address). A tail call keeps its caller's frame, as the machine state does.
//
// Return addresses moved by hand:
//
//   - A call into the function that makes it, not at its start (call 1f;
//     1: pop, to learn the PC; a retpoline's inner call) enters no
//     function and makes no frame. SameFunction tells (the symbols, else
//     the SFrame data's functions); without it, a call to its own return
//     address makes a frame marked Unsure (a get-PC idiom or a call of
//     the function that follows), which on x86-64 the pop of that address
//     then drops.
//   - On x86-64, a callee that pops its own return address (SP from CFA-8
//     to the CFA, the slot still holding it: PCRE2's JIT code, glibc's
//     vfork) keeps its frame, Detached: it returns later with push and
//     ret, or an indirect jump to the return address with SP at the CFA,
//     which pops it like a return. The frame is also gone when SP rises
//     above its CFA, or when control is back in the calling function (at
//     SP at the CFA, not in the callee's: with SameFunction). Popping an
//     address written over the return address (libgcc entering a landing
//     pad) leaves the frame. A detached frame is Unsure while nothing
//     shows its callee's code running (the code of the activation: the PC,
//     or the call site of the frame above).
//   - On AArch64, a branch to a register (br x30) landing at the return
//     address of a frame whose CFA SP is at is that frame's return.
//
// What is compared with an Unsure frame, or beyond it, is unknown.
//
// Context switches (swapcontext and setcontext, coroutine and green-thread
// libraries) move a thread from one call stack to another. The stack keeps
// the ones the thread left, parked, and follows the switches:
//
//   - A new context: an unexpected return or an indirect jump lands on the
//     first instruction of another function than the one that jumped,
//     with a return address (x86-64: the word at SP; AArch64: x30) that is
//     neither in that function nor any frame's — makecontext's entry into
//     its function, returning to __start_context. The call stack is parked
//     (with the frames the switch's own load of SP dropped a few
//     instructions before, when the new stack lies in a caller's frame),
//     and a new one starts with the entered function's frame, as the ABI
//     defines it at a function's entry: CFA = SP + 8 (x86-64) or SP, its
//     return address, the FP it starts with.
//   - A resume: a return or indirect jump that the current call stack does
//     not explain lands where a frame of a parked one returns (its return
//     address, SP at its CFA) or in that frame's callee with SP where the
//     callee had it at its entry (AArch64 swapcontext resumes in itself).
//     The current call stack is parked, that one comes back, less the
//     frames above the one resumed.
//   - Once a switch was seen, SP rising above every frame of the call
//     stack parks it (swapcontext loads the saved SP, then returns): the
//     landing that ends the switch tells which call stack runs, and a
//     landing among the frames of a parked one that none of them explains
//     is a longjmp into it.
//
// A parked call stack that began where a new one begins is forgotten (a
// context that ended, its stack reused), and at most maxParked call
// stacks of maxParkedFrames frames in all are kept, the oldest forgotten
// first. A program that never switches contexts never parks one: all of
// the above is then inert.
//
// A signal delivery is told to the stack ([Stack.Signal]) and pushes two
// frames, both marked with the signal:
//
//   - the signal frame (SignalFrame set): the kernel's rt_sigframe, the
//     frame of the signal trampoline (the restorer or the vDSO's
//     __kernel_rt_sigreturn, its Entry). It stands for the interrupted
//     state, as an unwinder going through the trampoline recovers it from
//     the ucontext: its CFA is the interrupted stack pointer, its return
//     address the interrupted PC (CallSite too) and its caller's FP the
//     interrupted frame pointer. The frames below it are those of the
//     interrupted code, as they were.
//   - the handler's frame: the kernel enters the handler as if the
//     trampoline had called it, so its return address is the trampoline,
//     its CFA is where the handler's stack pointer starts (plus the pushed
//     return address on x86-64) and its caller's FP is the frame pointer
//     the handler starts with.
//
// The handler's return pops its frame like any other, and from then on
// (the trampoline runs on the handler's stack, which may be an alternate
// signal stack anywhere) the signal frame is not dropped by the stack
// pointer rule; rt_sigreturn ([Stack.SignalReturn]) is its return, back to
// the interrupted state. siglongjmp out of a handler drops the handler's
// and the signal frame as longjmp drops frames: the stack pointer leaves
// them (x86-64: SP at or above the interrupted SP; AArch64: above it, or
// at it after the indirect branch that ends longjmp, in the interrupted
// function). A signal delivered during a handler, or in the trampoline,
// pushes its two frames on top: nested deliveries nest on the stack. An
// instruction that faulted did not run: the signal it raised interrupts
// it, and its call or return is not applied.
package shadow

import (
	"encoding/binary"
	"fmt"

	"github.com/sframesim/sframesim/arch"
)

// Record is one instruction about to execute: its address and size and the
// stack pointer, frame pointer and (AArch64) link register before it runs.
// It has the layout of emu.Record, so one converts to the other.
type Record struct {
	PC, SP, FP, RA uint64
	Size           uint32
	// N > 1: the record stands for N instructions, the one at PC and N-1
	// that ran after it with the same SP, FP and RA, none of them a call,
	// a return or an indirect branch but maybe the last, at LastPC
	// (LastSize bytes) (emu.Engine.SetMerge). 0 or 1: one instruction.
	N        uint32
	LastPC   uint64
	LastSize uint32
	// Moved: the run went on with other registers after instructions
	// that neither called, returned nor branched to a register
	// (emu.Engine.SetExtend); LastSP, LastFP and LastRA are the last
	// instruction's. Follow applies such an instruction's own.
	Moved                  bool
	LastSP, LastFP, LastRA uint64
}

// Frame is one activation on the shadow call stack, recorded by watching
// the call that created it. See the package documentation for the exact
// definitions of CFA, return address and FP.
type Frame struct {
	CallSite   uint64 // address of the call instruction
	ReturnAddr uint64 // address the callee returns to (call site + its length)
	CFA        uint64 // the callee's canonical frame address
	CallerFP   uint64 // the caller's frame pointer (rbp / x29) at the call
	Entry      uint64 // first instruction executed in the callee
	Insn       uint64 // instruction count when the callee started
	// Signal is the signal of a delivery's frames (0 for a call): the
	// handler's frame (entered by the kernel, not by a call: CallSite is
	// then the trampoline the handler returns to) and, below it, the
	// signal frame.
	Signal int
	// SignalFrame marks a delivery's signal frame (see the package
	// documentation): CFA, ReturnAddr (and CallSite) and CallerFP are the
	// interrupted SP, PC and FP; Entry is the trampoline.
	SignalFrame bool
	// Detached (x86-64): the callee took its return address off the
	// stack without returning — a pop (or add) moved SP from CFA-8 to
	// the CFA — to hold it in a register, as PCRE2's JIT code and glibc's
	// vfork do before returning with push and ret or an indirect jump. The
	// frame stays until control reaches its return address with SP at its
	// CFA, SP leaves it, or (with symbols) control is back in the
	// calling function (see the package documentation).
	Detached bool
	// Unsure: the stack cannot tell whether this frame is still live, so
	// what is compared with it and the frames below it is unknown: a
	// detached frame whose callee's code symbols do not show running
	// (Detached), or a call to its own return address where symbols do
	// not tell a get-PC idiom (no frame) from a call of the function
	// that happens to follow (a frame).
	Unsure bool
}

// SignalMark is a signal delivery on the stack: its signal frame is
// Frames()[Depth] and the handler's Frames()[Depth+1] (until the handler
// returns), and the state the signal interrupted (where rt_sigreturn goes
// back to) is Interrupted.
type SignalMark struct {
	Signal      int
	Depth       int
	Interrupted Record // PC, SP, FP (and LR) of the interrupted code
	Frame       uint64 // the kernel's signal frame (rt_sigframe)
	// Returned: the handler returned to the trampoline; rt_sigreturn
	// comes next.
	Returned bool
}

// Anomaly is a departure from strict call/return nesting.
type Anomaly struct {
	Insn   uint64 // instruction count
	PC     uint64 // where execution went
	Kind   string // "unexpected-return", "return-skipped-frames"
	Detail string
}

// Stack keeps the true call stack of a guest by watching every
// instruction: a call pushes a frame, a return pops the frame it returns
// to, and frames whose CFA lies below the stack pointer are dropped, as
// they are when longjmp or C++ exception unwinding abandons them. A tail
// call keeps its caller's frame, which is what the machine state shows too.
//
// Observe must see every executed instruction, in order, with the
// registers before it ran (a Record, as the C hook collects them).
type Stack struct {
	// SameFunction, when set, tells whether two code addresses belong to
	// the same function (cold partitions included). It resolves the
	// AArch64 ambiguity of SP == CFA after an indirect jump: landing in the
	// function a frame returns to means that frame and those above it were
	// abandoned (a C++ landing pad, a longjmp); landing where no frame
	// returns is a tail call. Without it, the link register decides.
	SameFunction func(a, b uint64) bool

	arch     *arch.Arch
	readCode func(addr uint64, buf []byte) error
	frames   []Frame
	signals  []SignalMark // deliveries not returned from, oldest first
	// anomalies: the first maxAnomalies; kinds: each kind's first and
	// count, in the order first seen (a program may make millions: a
	// retpoline's every call, a coroutine's every switch).
	anomalies []Anomaly
	kinds     []AnomalyKind
	// Flow classes per 4 KiB page of code (flowUnknown where not yet
	// classified), with the pages used last at hand (direct-mapped by page
	// number): a slice index instead of a map lookup for nearly every
	// instruction, also in code that calls across pages.
	pages  map[uint64][]arch.Flow
	recent [recentPages]recentPage
	// parked: the call stacks the thread switched away from (context
	// switches: swapcontext, coroutine and green-thread libraries), to
	// resume; see the package documentation.
	parked []segment
	// parkedFrames: the frames of the parked call stacks together;
	// resumeKeys counts by stack pointer the parked frames a landing
	// there may resume (resumeDepth at the top of each call stack, at
	// their CFA and a word below); tops counts the parked call stacks by
	// their outermost CFA's 512-byte bucket. (So that a program with
	// thousands of contexts pays no pass over them at every indirect jump
	// or switch.)
	parkedFrames int
	resumeKeys   map[uint64]int32
	tops         map[uint64]int32
	resumeScans  uint64 // passes over the parked call stacks (a test's count)
	// dropped: the frames the stack pointer rule dropped last, at
	// instruction droppedAt.
	dropped   []Frame
	droppedAt uint64
	// leftAt: the instruction at which the stack pointer last left every
	// frame of a call stack, which was parked (0: none).
	leftAt   uint64
	prev     Record
	prevFlow arch.Flow
	havePrev bool
	insn     uint64
	unwound  uint64 // frames dropped by the SP rule
	version  uint64 // changes whenever frames does
	code     [16]byte
	// followSP is the stack pointer of the last instruction Observe or
	// Follow saw (Follow's previous instruction: SP only changes at the
	// instructions Follow is given).
	followSP uint64
	// special counts the frames with Detached or Unsure set (land only
	// looks at them when there are some).
	special int
	// calls: the kinds of recent calls (callKind), direct-mapped by call
	// site and target, forgotten where code changes (Invalidate, Restore)
	// or SameFunction is set anew (SetSameFunction).
	calls [256]callMemo
	// entries: whether recent landing PCs are functions' first
	// instructions (isEntry), direct-mapped, forgotten with calls.
	// Made at the first landing asked about (most threads never jump).
	entries *[1024]entryMemo
}

// SetSameFunction sets SameFunction and forgets what it said.
func (s *Stack) SetSameFunction(fn func(a, b uint64) bool) {
	s.SameFunction = fn
	s.calls = [256]callMemo{}
	s.forgetEntries()
}

// New returns an empty shadow stack for a program of architecture a whose
// code readCode reads: the frame of the entry point is the outermost one
// and has no record.
func New(a *arch.Arch, readCode func(addr uint64, buf []byte) error) *Stack {
	return &Stack{arch: a, readCode: readCode, pages: make(map[uint64][]arch.Flow)}
}

// Observe updates the stack for the instruction about to run at r.PC.
//
// A record of N > 1 instructions is observed as all of them: none before
// the last changes the stack, and the last is the previous instruction for
// the next record.
func (s *Stack) Observe(r Record) { s.ObserveRef(&r) }

// ObserveRef is Observe of *r, which it does not keep: the engine's
// records reach it by pointer (a Record passed by value is copied in wide
// moves that wait for the narrow stores that filled it, once per record).
func (s *Stack) ObserveRef(r *Record) {
	s.insn++
	s.settle(r)
	s.followSP = r.SP
	s.setPrev(r)
	s.havePrev = true
	if r.N > 1 {
		s.insn += uint64(r.N - 1)
		s.prev.PC, s.prev.Size, s.prev.N = r.LastPC, r.LastSize, 1
		if r.Moved {
			s.prev.SP, s.prev.FP, s.prev.RA = r.LastSP, r.LastFP, r.LastRA
		}
	}
	s.prevFlow = s.flow(s.prev.PC, s.prev.Size)
}

// setPrev sets s.prev to *r field by field. (s.prev = *r compiles to wide
// moves from the argument, which the caller stored field by field: each
// waits for those narrow stores to retire, once per observed record.)
// TestSetPrev checks that every field is copied.
func (s *Stack) setPrev(r *Record) {
	p := &s.prev
	p.PC, p.SP, p.FP, p.RA = r.PC, r.SP, r.FP, r.RA
	p.Size, p.N, p.LastPC, p.LastSize = r.Size, r.N, r.LastPC, r.LastSize
	p.Moved, p.LastSP, p.LastFP, p.LastRA = r.Moved, r.LastSP, r.LastFP, r.LastRA
}

// Follow applies to the stack an instruction r of a run Observe counted
// already (Record.Moved), after one that neither called nor returned: a
// branch to a register (jumped) or none. The frames its stack pointer
// left are gone, as Observe would have found instruction by instruction.
func (s *Stack) Follow(r Record, jumped bool) {
	prevSP := s.followSP
	s.followSP = r.SP
	s.land(&r, len(s.frames), false, jumped, prevSP)
}

// Unobserve takes back the last Observe when that instruction did not run
// after all (the observer stopped the engine before it). Its record will
// be observed again when execution resumes.
func (s *Stack) Unobserve() {
	if s.havePrev {
		s.insn--
		s.havePrev = false
	}
}

// Sync brings the stack up to date with the machine state r at a stop,
// where the next instruction has not been observed yet (emulation ended
// right after a call or return). Observing that instruction later, when
// execution resumes, does not apply the call or return twice.
func (s *Stack) Sync(r Record) {
	s.settle(&r)
	s.havePrev = false
}

// settle applies the effect of the previous instruction, now that r shows
// where it led, and drops abandoned frames.
func (s *Stack) settle(r *Record) {
	retJumped := false // a return no frame expected
	var expected uint64
	hasExpected := false
	n0, called := len(s.frames), s.havePrev && s.prevFlow == arch.FlowCall
	jumped := false // control arrived by an indirect jump or a return to an unexpected place
	prevSP := r.SP
	if s.havePrev {
		p := &s.prev
		prevSP = p.SP
		flow := s.prevFlow
		if r.PC == p.PC && r.SP == p.SP {
			flow = arch.FlowOther // it faulted: it did not run
			called = false
		}
		switch flow {
		case arch.FlowCall:
			// A call leaves the caller's SP (before the call) as the
			// callee's CFA on both architectures: x86-64 pushes the return
			// address just below it; AArch64 leaves SP alone.
			ra := p.PC + uint64(p.Size)
			switch s.callKind(p.PC, r.PC, ra) {
			case callWithin:
				// A call into its own function, not at its start (call
				// 1f; 1: pop, a retpoline's inner call): no function is
				// entered, no frame made.
				called = false
			case callUnsure:
				s.frames = append(s.frames, Frame{CallSite: p.PC, ReturnAddr: ra, CFA: p.SP, CallerFP: p.FP,
					Entry: r.PC, Insn: s.insn, Unsure: true})
				s.special++
			default:
				// (Grown, then set field by field: a composite literal
				// is built on the stack and copied in wide moves that
				// wait for the narrow stores that built it, at every
				// call.)
				s.frames = append(s.frames, Frame{})
				f := &s.frames[len(s.frames)-1]
				f.CallSite, f.ReturnAddr, f.CFA, f.CallerFP, f.Entry, f.Insn = p.PC, ra, p.SP, p.FP, r.PC, s.insn
			}
		case arch.FlowRet:
			// A context switch back to a call stack parked at its top
			// frame's call (swapcontext), unless the current one
			// explains the return (the cheap test first).
			if k := s.resumable(r); k >= 0 && !s.returnsHere(r) {
				s.resume(k, r)
				n0 = -1
				break
			}
			if n := len(s.frames); n > 0 {
				expected, hasExpected = s.frames[n-1].ReturnAddr, true
			}
			jumped = !s.pop(r)
			retJumped = jumped
		case arch.FlowJump:
			if len(s.parked) == 0 {
				jumped = true
				break
			}
			if k := s.resumable(r); k >= 0 && !s.returnsHere(r) {
				s.resume(k, r)
				n0 = -1
				break
			}
			jumped = true
		}
		switch {
		case jumped && (len(s.frames) > 0 || len(s.parked) > 0) && s.SameFunction != nil && s.isEntry(r.PC) && s.newContext(r, p):
			jumped, n0, retJumped = false, -1, false
		case len(s.frames) == 0 && len(s.parked) > 0 && (jumped || s.leftAt != 0 && s.insn-s.leftAt <= maxSwitchInsns &&
			r.PC != p.PC+uint64(p.Size) && s.SameFunction != nil && !s.SameFunction(r.PC, p.PC)):
			// Landing after a switch away (land) among the frames of a
			// parked call stack, not where one of them returns: a
			// longjmp into it (x86-64's ends with jmp *reg, which the
			// stack does not classify: a jump into another function a
			// few instructions after the switch away counts, not the
			// switch's own branches). The stack pointer rule (land) drops the
			// frames above the landing.
			if k := s.parkedAt(r.SP); k >= 0 {
				s.switchTo(k)
				s.anomaly("context-switch", r.PC, func() string {
					return fmt.Sprintf("jumped to %#x with the stack pointer at %#x, among the frames of a call stack left before", r.PC, r.SP)
				})
				n0 = -1
			}
		}
	}
	if retJumped {
		s.unexpectedReturn(r, s.prev.PC, expected, hasExpected)
	}
	s.land(r, n0, called, jumped, prevSP)
}

// segment is a call stack a context switch left: its frames and signal
// deliveries.
type segment struct {
	frames  []Frame
	signals []SignalMark
}

// maxParked bounds the call stacks a thread keeps parked: beyond it the
// one parked first is forgotten (a context resumed after that is not
// recognized, as if the switch had not been seen).
const maxParked = 4096

// maxParkedFrames bounds the frames of the parked call stacks together (a
// guest's coroutines may hold deep stacks in memory no stack limit caps).
const maxParkedFrames = 1 << 20

// maxSwitchInsns bounds the instructions from a context switch's load of
// the stack pointer to the return or jump that ends it.
const maxSwitchInsns = 64

// returnsHere reports whether the current call stack explains landing at
// r (resumesAt): a return or a jump, not a context switch.
func (s *Stack) returnsHere(r *Record) bool {
	i, _ := s.resumesAt(s.frames, r)
	return i >= 0
}

// resumable returns the parked call stack with a frame that returns to
// r.PC with the stack pointer at its CFA (swapcontext and setcontext
// return so from the call that saved the context; frames above it are
// the switch's own calls, as AArch64 swapcontext's of setcontext), -1 if
// none.
func (s *Stack) resumable(r *Record) int {
	if s.resumeKeys[r.SP] == 0 {
		return -1
	}
	s.resumeScans++
	for k := len(s.parked) - 1; k >= 0; k-- {
		if i, _ := s.resumesAt(topFrames(s.parked[k].frames), r); i >= 0 {
			return k
		}
	}
	return -1
}

// resumeDepth is how deep in a parked call stack a resume may land: the
// frame that called the switch is at its top, or under the switch's own
// calls (AArch64 swapcontext calls setcontext).
const resumeDepth = 4

// topFrames returns the top resumeDepth of frames.
func topFrames(frames []Frame) []Frame { return frames[max(0, len(frames)-resumeDepth):] }

// addParked parks seg, keeping the counts.
func (s *Stack) addParked(seg segment) {
	if s.resumeKeys == nil {
		s.resumeKeys, s.tops = map[uint64]int32{}, map[uint64]int32{}
	}
	s.parked = append(s.parked, seg)
	s.parkedFrames += len(seg.frames)
	s.countParked(&seg, 1)
}

// removeParked unparks call stack k, keeping the counts.
func (s *Stack) removeParked(k int) segment {
	seg := s.parked[k]
	s.parked = append(s.parked[:k], s.parked[k+1:]...)
	s.parkedFrames -= len(seg.frames)
	s.countParked(&seg, -1)
	return seg
}

// countParked adds d to the counts of seg's keys.
func (s *Stack) countParked(seg *segment, d int32) {
	bump := func(m map[uint64]int32, k uint64) {
		if m[k] += d; m[k] == 0 {
			delete(m, k)
		}
	}
	for _, f := range topFrames(seg.frames) {
		bump(s.resumeKeys, f.CFA)
		bump(s.resumeKeys, f.CFA-8)
	}
	bump(s.tops, seg.frames[0].CFA>>9)
}

// resumesAt returns the index of the topmost of frames that landing at r
// continues: one that returns to r.PC with the stack pointer at its CFA
// (keep false: it returned), or — with SameFunction — one whose callee r.PC
// lies in, with the stack pointer where the callee had it at its entry
// (keep: its callee runs again; AArch64 swapcontext resumes a context in
// itself, and returns from there). -1 if none.
func (s *Stack) resumesAt(frames []Frame, r *Record) (i int, keep bool) {
	entrySP := uint64(8) // below the CFA at a callee's entry
	if s.arch.HasLinkRegister() {
		entrySP = 0
	}
	for i := len(frames) - 1; i >= 0; i-- {
		f := &frames[i]
		if f.ReturnAddr == r.PC && f.CFA == r.SP {
			return i, false
		}
		if s.SameFunction != nil && r.SP == f.CFA-entrySP && !f.SignalFrame && s.SameFunction(r.PC, f.Entry) {
			return i, true
		}
	}
	return -1, false
}

// resume switches to parked call stack k, one of whose frames' call
// returns at r, and pops that frame and those above it.
func (s *Stack) resume(k int, r *Record) {
	fr := s.parked[k].frames
	i, keep := s.resumesAt(topFrames(fr), r)
	i += len(fr) - len(topFrames(fr))
	s.undrop(r.SP)
	s.switchTo(k)
	if keep {
		i++
	}
	s.frames = s.frames[:i]
	for n := len(s.signals); n > 0 && s.signals[n-1].Depth >= i; n-- {
		s.signals = s.signals[:n-1]
	}
	s.recount()
	s.anomaly("context-switch", r.PC, func() string {
		return fmt.Sprintf("resumed at %#x with the stack pointer at %#x", r.PC, r.SP)
	})
}

// switchTo parks the current call stack and makes parked stack k the
// current one.
func (s *Stack) switchTo(k int) {
	seg := s.removeParked(k)
	s.park()
	s.frames, s.signals = seg.frames, seg.signals
	s.recount()
	s.version++
}

// park sets the current call stack aside (if it has frames), forgetting
// parked ones that began where it begins (an earlier context on the same
// stack, which ended), and leaves an empty one.
func (s *Stack) park() {
	if len(s.frames) > 0 {
		s.forgetStale(s.frames[0].CFA)
		for len(s.parked) > 0 && (len(s.parked) >= maxParked || s.parkedFrames+len(s.frames) > maxParkedFrames) {
			s.removeParked(0)
		}
		s.addParked(segment{frames: s.frames, signals: s.signals})
	}
	s.frames, s.signals = nil, nil
	s.special = 0
}

// staleSlack is how near the outermost CFAs of two call stacks must be
// for them to be one stack's: a new context on it starts where the ended
// one started (makecontext's frame at the same top), give or take its
// exit path's few words (__start_context calling setcontext).
const staleSlack = 256

// forgetStale forgets the parked call stacks whose outermost frame's CFA
// lies within staleSlack of top: contexts that ended on the stack a new
// one begins on. (Not any whose frames span it: a coroutine's stack may be
// an array in a frame of another call stack, parked or not.)
func (s *Stack) forgetStale(top uint64) {
	if s.tops[top>>9] == 0 && s.tops[(top>>9)-1] == 0 && s.tops[(top>>9)+1] == 0 {
		return // (staleSlack is below the buckets' 512 bytes)
	}
	for k := len(s.parked) - 1; k >= 0; k-- {
		if c := s.parked[k].frames[0].CFA; c <= top+staleSlack && top <= c+staleSlack {
			s.removeParked(k)
		}
	}
}

// undrop puts back the frames the stack pointer rule dropped last, when
// that was a context switch's load of the stack pointer, a few
// instructions ago, to sp above them (the new context's stack lies in a
// caller's frame): the switch is made from them, and they are parked with
// the call stack, to be resumed.
func (s *Stack) undrop(sp uint64) {
	if len(s.dropped) > 0 && s.insn-s.droppedAt <= maxSwitchInsns && s.dropped[0].CFA < sp {
		s.frames = append(s.frames, s.dropped...)
	}
	s.dropped = s.dropped[:0]
}

// parkedAt returns the parked call stack among whose frames the stack
// pointer sp lies (from a word below its top frame's CFA to its outermost
// frame's CFA), -1 if none.
func (s *Stack) parkedAt(sp uint64) int {
	for k := len(s.parked) - 1; k >= 0; k-- {
		fr := s.parked[k].frames
		if sp+8 >= fr[len(fr)-1].CFA && sp <= fr[0].CFA {
			return k
		}
	}
	return -1
}

// newContext recognizes a switch to a new context (makecontext, a
// coroutine's or green thread's first run): an unexpected return or an
// indirect jump p that lands at r on the first instruction of another
// function, with a return address (x86-64: the word at the stack pointer;
// AArch64: the link register) outside the function that jumped and no
// frame's (not a tail call); 0 (none: a hand-made context's entry that
// never returns) too.
// The current call stack is parked and a new one starts with the frame of
// the entered function, as if its return address had called it: its CFA
// and return address are what the ABI makes them at a function's entry.
//
// settle calls it only where SameFunction is set, r.PC is a function's
// first instruction (isEntry) and there are frames or parked call stacks:
// with nothing on the stack, nor parked, the entered function is the
// outermost one (ld.so jumping to the program's entry point), no frame.
func (s *Stack) newContext(r *Record, p *Record) bool {
	same := s.SameFunction
	cfa, ra := r.SP, s.arch.StripPAC(r.RA)
	if !s.arch.HasLinkRegister() {
		var b [8]byte
		if s.readCode(r.SP, b[:]) != nil {
			return false
		}
		cfa, ra = r.SP+8, binary.LittleEndian.Uint64(b[:])
	}
	// Not a jump within a function, to its start, nor one whose return
	// address is a frame's (a tail call, or a jump in the frame's
	// activation).
	if same(r.PC, p.PC) || ra != 0 && same(ra, p.PC) {
		return false
	}
	for i := range s.frames {
		if s.frames[i].ReturnAddr == ra {
			return false
		}
	}
	s.undrop(cfa)
	// A context that ended on the stack the new one starts on left its
	// call stack parked.
	s.forgetStale(cfa)
	s.park()
	s.frames = append(s.frames, Frame{CallSite: ra, ReturnAddr: ra, CFA: cfa, CallerFP: r.FP, Entry: r.PC, Insn: s.insn})
	s.anomaly("new-context", r.PC, func() string {
		return fmt.Sprintf("entered %#x with the stack pointer at %#x, returning to %#x", r.PC, r.SP, ra)
	})
	s.version++
	return true
}

// Kinds of call (callKind).
const (
	callFrame  = iota // a call: a frame
	callWithin        // into the calling function, not at its start: no frame
	callUnsure        // to its own return address, no symbols to tell which
)

// callKind classifies a call at site to target, returning to ra. With
// symbols, a call into the function that makes it (the target's previous
// byte in it too: not a recursive call of its start) enters no function;
// one to its own return address (call 1f; 1:) is such a call too, unless
// symbols put the target in another function (a noreturn call ending a
// function, followed by the function it calls). Without symbols for both
// addresses, a call to its own return address cannot be told (callUnsure);
// any other call is a frame.
func (s *Stack) callKind(site, target, ra uint64) int {
	c := &s.calls[(site^site>>7^target)%uint64(len(s.calls))]
	if c.kind != 0 && c.site == site && c.target == target {
		return int(c.kind - 1)
	}
	k := s.classifyCall(site, target, ra)
	*c = callMemo{site: site, target: target, kind: int8(k + 1)}
	return k
}

// entryMemo says whether pc is a function's first instruction (entry+1:
// 0 for none).
type entryMemo struct {
	pc    uint64
	entry int8
}

// isEntry reports whether pc is the first instruction of a function
// SameFunction knows (which must be set): an indirect jump lands on one
// at a new context, and on others all the time (switch tables, an
// interpreter's dispatch), so the answer is kept.
func (s *Stack) isEntry(pc uint64) bool {
	if s.entries == nil {
		s.entries = new([1024]entryMemo)
	}
	e := &s.entries[(pc^pc>>8)%uint64(len(s.entries))]
	if e.entry != 0 && e.pc == pc {
		return e.entry == 2
	}
	yes := s.SameFunction(pc, pc) && !s.SameFunction(pc-1, pc)
	e.pc, e.entry = pc, 1
	if yes {
		e.entry = 2
	}
	return yes
}

// forgetEntries forgets every landing isEntry was asked about.
func (s *Stack) forgetEntries() {
	if s.entries != nil {
		*s.entries = [1024]entryMemo{}
	}
}

// callMemo is a call's kind (callKind) at hand: kind-1, 0 for none.
type callMemo struct {
	site, target uint64
	kind         int8
}

// classifyCall is callKind without the memo.
func (s *Stack) classifyCall(site, target, ra uint64) int {
	same := s.SameFunction
	if same != nil && same(site, target) && same(target-1, target) {
		return callWithin
	}
	if target == ra && (same == nil || !same(site, site) || !same(target, target)) {
		return callUnsure
	}
	return callFrame
}

// land drops the frames r's instruction left, after one that called
// (called), made an unexpected jump (jumped, see settle) or neither, with
// SP prevSP before it, and counts a new version if the frames changed
// since they were n0.
func (s *Stack) land(r *Record, n0 int, called, jumped bool, prevSP uint64) {
	flags := false // a frame's Detached or Unsure changed
	// Once the thread has switched contexts, the stack pointer leaving
	// every frame of the call stack is a switch away from it (swapcontext
	// loads the saved stack pointer, then returns): the call stack is
	// parked, and the return or jump that ends the switch (settle) tells
	// which one runs next.
	if len(s.parked) > 0 && len(s.frames) > 0 && r.SP > s.frames[0].CFA {
		s.park()
		s.leftAt, n0 = s.insn, -1
	}
	// Frames the stack pointer has left are gone (longjmp, exception
	// unwinding).
	before := len(s.frames)
	for n := len(s.frames); n > 0; n-- {
		f := &s.frames[n-1]
		if !s.abandoned(f, r, jumped) {
			break
		}
		if !s.arch.HasLinkRegister() && r.SP == f.CFA && !jumped && !called && prevSP == f.CFA-8 && f.Entry != f.ReturnAddr && s.raAt(f) {
			// The callee popped its return address (or added 8 to SP),
			// still in its slot: it holds it elsewhere, and may still
			// return to it. (libgcc enters a landing pad popping the
			// address it wrote over a return address: a jump.)
			f.Detached, flags = true, true
			s.special++
			break
		}
		s.frames = s.frames[:n-1]
		s.unwound++
	}
	if len(s.frames) < before {
		// Kept a moment: a switch to a new context loading a stack
		// pointer above them (a coroutine's stack inside its caller's
		// frame) left them only for a while (newContext).
		s.dropped = append(s.dropped[:0], s.frames[len(s.frames):before]...)
		s.droppedAt = s.insn
	}
	if s.special > 0 && !called {
		flags = s.resolve(r, jumped) || flags
	}
	// After an indirect jump on AArch64 with SP at the top frame's CFA, the
	// landing function tells which frames are left: a landing pad or a
	// longjmp target lies in the function a frame returns to (that frame
	// and those above it are gone); a tail call lands where no frame
	// returns.
	if jumped && s.arch.HasLinkRegister() {
		// A branch to the return address of a frame whose CFA SP is at
		// (br x30) is that frame's return.
		for k := len(s.frames) - 1; k >= 0 && s.frames[k].CFA == r.SP; k-- {
			if s.frames[k].ReturnAddr == r.PC {
				s.frames = s.frames[:k]
				break
			}
		}
	}
	// A jump to a function's first instruction is a tail call, also into
	// the function that made a frame's call (a recursion through a tail
	// call: CPython's tuplehash calls PyObject_Hash, which tail-calls the
	// inner tuple's tuplehash): no landing pad or longjmp target is there.
	if jumped && s.SameFunction != nil && s.arch.HasLinkRegister() && s.SameFunction(r.PC-1, r.PC) {
		if n := len(s.frames); n > 0 && r.SP == s.frames[n-1].CFA {
			for k := n - 1; k >= 0; k-- {
				// Landing in the function that made frame k's call leaves
				// SP at that frame's CFA (the caller's SP at the call):
				// a frame above SP is no target. Without this, a PLT
				// stub's branch into a function (raise) that a signal
				// interrupted further down the stack would pop the
				// handler and its signal frame.
				if s.frames[k].CFA > r.SP {
					break
				}
				// The call site, not the return address: a call to a
				// noreturn function (__cxa_throw) may be a function's last
				// instruction, its return address already in the next one.
				if s.SameFunction(s.frames[k].CallSite, r.PC) {
					s.unwound += uint64(n - k)
					s.frames = s.frames[:k]
					break
				}
			}
		}
	}
	if s.special > 0 {
		s.recount()
	}
	// Deliveries whose signal frame is gone (siglongjmp) are forgotten.
	for k := len(s.signals); k > 0 && s.signals[k-1].Depth >= len(s.frames); k-- {
		s.signals = s.signals[:k-1]
	}
	if called || flags || len(s.frames) != n0 {
		s.version++
	}
}

// resolve settles the detached frames (x86-64) at r, after an unexpected
// jump (jumped) or not: one whose return address r is at with SP at its
// CFA returned (a return by push and ret, or by an indirect jump); with
// symbols, the top one is gone when control is back in the function that
// called it, at its SP, and not in the function it called. It then
// updates which frames are unsure, and reports whether a flag changed.
func (s *Stack) resolve(r *Record, jumped bool) bool {
	for k := len(s.frames) - 1; k >= 0 && s.frames[k].CFA == r.SP; k-- {
		if f := &s.frames[k]; f.Detached && f.ReturnAddr == r.PC {
			s.frames = s.frames[:k]
			break
		}
	}
	if n := len(s.frames); n > 0 && s.SameFunction != nil {
		if f := &s.frames[n-1]; f.Detached && f.CFA == r.SP && s.SameFunction(f.CallSite, r.PC) && !s.SameFunction(f.Entry, r.PC) {
			s.frames = s.frames[:n-1]
			s.unwound++
		}
	}
	changed := false
	for i := range s.frames {
		f := &s.frames[i]
		if !f.Detached {
			continue
		}
		// The code the frame's activation runs: the callee's while it is
		// known to run it, the frame stands.
		at := r.PC
		if i+1 < len(s.frames) {
			at = s.frames[i+1].CallSite
		}
		// (A recursive call's callee and caller run the same code.)
		unsure := s.SameFunction == nil || !s.SameFunction(f.Entry, at) || s.SameFunction(f.CallSite, at)
		if unsure != f.Unsure {
			f.Unsure, changed = unsure, true
		}
	}
	return changed
}

// raAt reports whether frame f's return address slot (x86-64: CFA-8)
// holds its return address.
func (s *Stack) raAt(f *Frame) bool {
	var b [8]byte
	return s.readCode(f.CFA-8, b[:]) == nil && binary.LittleEndian.Uint64(b[:]) == f.ReturnAddr
}

// recount counts the frames with Detached or Unsure set.
func (s *Stack) recount() {
	s.special = 0
	for i := range s.frames {
		if s.frames[i].Detached || s.frames[i].Unsure {
			s.special++
		}
	}
}

// Special reports whether a frame is detached or unsure (Frame.Detached,
// Frame.Unsure): the frames may then change at an instruction that
// neither calls, returns nor moves SP, where the PC reaches a detached
// frame's return address or leaves its callee's code (Follow).
func (s *Stack) Special() bool { return s.special > 0 }

// Unsure returns how many frames are unsure (Frame.Unsure).
func (s *Stack) Unsure() int {
	n := 0
	if s.special > 0 {
		for i := range s.frames {
			if s.frames[i].Unsure {
				n++
			}
		}
	}
	return n
}

// Signal records a signal delivery, before the handler's first
// instruction is observed: interrupted is the state the signal
// interrupted (the stack must be settled up to it: Sync), handler the
// state the handler starts with (PC, SP, FP), ret the address it returns
// to (the trampoline) and frame the kernel's signal frame. It pushes the
// signal frame and the handler's frame.
func (s *Stack) Signal(sig int, interrupted, handler Record, ret, frame uint64) {
	cfa := handler.SP
	if !s.arch.HasLinkRegister() {
		cfa += 8 // the return address the kernel pushed (pretcode)
	}
	s.signals = append(s.signals, SignalMark{Signal: sig, Depth: len(s.frames), Interrupted: interrupted, Frame: frame})
	s.frames = append(s.frames,
		Frame{CallSite: interrupted.PC, ReturnAddr: interrupted.PC, CFA: interrupted.SP, CallerFP: interrupted.FP,
			Entry: ret, Insn: s.insn, Signal: sig, SignalFrame: true},
		Frame{CallSite: ret, ReturnAddr: ret, CFA: cfa, CallerFP: handler.FP,
			Entry: handler.PC, Insn: s.insn, Signal: sig})
	s.havePrev = false
	s.version++
}

// SignalReturn records an rt_sigreturn, before the restored state's first
// instruction is observed: the signal frame of the last delivery is
// popped, with whatever is left above it (its handler's frame was
// normally popped by its return already).
func (s *Stack) SignalReturn() {
	s.havePrev = false
	n := len(s.signals)
	if n == 0 {
		return
	}
	m := s.signals[n-1]
	s.signals = s.signals[:n-1]
	if m.Depth < len(s.frames) {
		s.frames = s.frames[:m.Depth]
	}
	if s.special > 0 {
		s.recount()
	}
	s.version++
}

// Signals returns the deliveries whose handlers have not returned
// (rt_sigreturn) nor been left by siglongjmp, oldest first. The slice is
// the stack's own.
func (s *Stack) Signals() []SignalMark { return s.signals }

// abandoned reports whether the machine state r shows that frame f is no
// longer live. On x86-64 a live callee keeps its return address at CFA-8,
// so SP stays below the CFA. On AArch64 SP reaches the CFA in the callee
// itself (at entry, and after the epilogue, before ret), so there SP == CFA
// means "abandoned" only right after an indirect branch or a return no
// frame expected (jumped: longjmp ends with br, libgcc enters a landing pad
// with ret) that left the link register without the frame's return
// address (pointer authentication code stripped): a longjmp back to the
// caller restores the caller's own x30. Elsewhere x30 may legitimately
// hold something else for a while, as in glibc's __sigsetjmp, which parks
// it in x13 around a call.
func (s *Stack) abandoned(f *Frame, r *Record, jumped bool) bool {
	if f.SignalFrame {
		// Only rt_sigreturn returns from a signal frame whose handler
		// returned, wherever the trampoline's stack is.
		if k := len(s.signals) - 1; k >= 0 && s.signals[k].Returned && &s.frames[s.signals[k].Depth] == f {
			return false
		}
	}
	switch {
	case r.SP > f.CFA:
		return true
	case r.SP < f.CFA:
		return false
	case !s.arch.HasLinkRegister():
		// A detached frame at its CFA is settled by resolve.
		return !f.Detached
	}
	if !jumped || s.SameFunction != nil {
		return false // with SameFunction, settle decided already
	}
	return s.arch.StripPAC(r.RA) != f.ReturnAddr
}

// pop handles a return that landed at r.PC; false if no frame expected it.
func (s *Stack) pop(r *Record) bool {
	n := len(s.frames)
	for i := n - 1; i >= 0; i-- {
		if s.frames[i].ReturnAddr == r.PC {
			if i != n-1 {
				s.anomaly("return-skipped-frames", r.PC, func() string {
					return fmt.Sprintf("return from %#x to %#x skipped %d frame(s)", s.prev.PC, r.PC, n-1-i)
				})
			}
			s.frames = s.frames[:i]
			// A handler returned to its trampoline.
			if k := len(s.signals) - 1; k >= 0 && s.signals[k].Depth == i-1 {
				s.signals[k].Returned = true
			}
			return true
		}
	}
	// A return no frame expects is a jump (push and ret, a retpoline,
	// libgcc entering a landing pad): the frames SP leaves are gone
	// (land), the others stay. settle counts it (unexpectedReturn) unless
	// it enters a new context.
	return false
}

// unexpectedReturn counts a return to r.PC that no frame expected, the
// top frame's return address being expected (has: there was one).
func (s *Stack) unexpectedReturn(r *Record, from, expected uint64, has bool) {
	s.anomaly("unexpected-return", r.PC, func() string {
		if has {
			return fmt.Sprintf("return from %#x to %#x, expected %#x", from, r.PC, expected)
		}
		return fmt.Sprintf("return from %#x to %#x with no frame on the shadow stack", from, r.PC)
	})
}

// maxAnomalies is how many anomalies a stack keeps in full (Anomalies);
// beyond them it counts them by kind (AnomalyKinds).
const maxAnomalies = 64

// AnomalyKind is a kind of anomaly: its first and how many there were.
type AnomalyKind struct {
	First Anomaly
	Count uint64
}

// anomaly counts an anomaly of kind at pc, whose detail is only made for
// the ones kept.
func (s *Stack) anomaly(kind string, pc uint64, detail func() string) {
	k := 0
	for k < len(s.kinds) && s.kinds[k].First.Kind != kind {
		k++
	}
	keep := len(s.anomalies) < maxAnomalies
	if k == len(s.kinds) || keep {
		a := Anomaly{Insn: s.insn, PC: pc, Kind: kind, Detail: detail()}
		if k == len(s.kinds) {
			s.kinds = append(s.kinds, AnomalyKind{First: a})
		}
		if keep {
			s.anomalies = append(s.anomalies, a)
		}
	}
	s.kinds[k].Count++
}

const flowUnknown = arch.Flow(0xff)

// recentPage is a page of flow classes at hand (flows nil: none).
type recentPage struct {
	page  uint64
	flows []arch.Flow
}

// recentPages is the number of pages of flow classes at hand, direct
// mapped: a large program's hot code spans hundreds of pages (with 16,
// the map lookup behind them was 0.7% of verifying SQLite).
const recentPages = 256

// flow classifies the instruction at pc, once per address.
func (s *Stack) flow(pc uint64, size uint32) arch.Flow {
	page := pc >> 12
	rp := &s.recent[page%recentPages]
	if rp.flows == nil || rp.page != page {
		p, ok := s.pages[page]
		if !ok {
			p = make([]arch.Flow, 1<<12)
			for i := range p {
				p[i] = flowUnknown
			}
			s.pages[page] = p
		}
		rp.page, rp.flows = page, p
	}
	f := rp.flows[pc&(1<<12-1)]
	if f == flowUnknown {
		f = s.classifyAt(pc, size)
		rp.flows[pc&(1<<12-1)] = f
	}
	return f
}

// Invalidate forgets how the instructions that may overlap guest memory
// [addr, addr+size) were classified: that code changed (a store into
// writable code, new or re-protected memory). Each is classified again,
// from the code as it is then, the next time it runs. It must be called
// before the first instruction that may see the change is observed.
func (s *Stack) Invalidate(addr, size uint64) {
	if size == 0 {
		return
	}
	// The functions code belongs to may have changed too (new code, new
	// symbols): the calls' kinds are found again.
	s.calls = [256]callMemo{}
	s.forgetEntries()
	if len(s.pages) == 0 {
		return
	}
	// An instruction starting up to len(s.code)-1 bytes before addr may
	// include the changed bytes.
	lo := addr - min(addr, uint64(len(s.code)-1))
	hi := addr + size
	if hi < addr {
		hi = ^uint64(0)
	}
	first, last := lo>>12, (hi-1)>>12
	if last-first >= uint64(len(s.pages)) {
		// Fewer classified pages than pages in the range.
		for page, p := range s.pages {
			if page >= first && page <= last {
				s.forget(page, p, lo, hi)
			}
		}
		return
	}
	for page := first; ; page++ {
		if p, ok := s.pages[page]; ok {
			s.forget(page, p, lo, hi)
		}
		if page == last {
			break
		}
	}
}

// forget marks the classes of page (p) in [lo, hi) unknown.
func (s *Stack) forget(page uint64, p []arch.Flow, lo, hi uint64) {
	start, end := page<<12, page<<12+1<<12
	if lo <= start && hi >= end {
		delete(s.pages, page)
		if rp := &s.recent[page%recentPages]; rp.flows != nil && rp.page == page {
			rp.flows = nil
		}
		return
	}
	for i := max(lo, start) - start; i < min(hi, end)-start; i++ {
		p[i] = flowUnknown
	}
}

// classifyAt reads and classifies the instruction at pc.
func (s *Stack) classifyAt(pc uint64, size uint32) arch.Flow {
	n := int(size)
	if n <= 0 || n > len(s.code) {
		n = len(s.code)
	}
	f := arch.FlowBad
	if err := s.readCode(pc, s.code[:n]); err == nil {
		f, _ = s.arch.Classify(s.code[:n])
	}
	return f
}

// Frames returns the frames, outermost first. The slice is the stack's
// own: copy it to keep it.
func (s *Stack) Frames() []Frame { return s.frames }

// Version returns a number that changes whenever the frames do.
func (s *Stack) Version() uint64 { return s.version }

// Depth returns the number of frames above the outermost function.
func (s *Stack) Depth() int { return len(s.frames) }

// Anomalies returns the departures from call/return nesting seen so far.
func (s *Stack) Anomalies() []Anomaly { return s.anomalies }

// AnomalyKinds returns each kind of anomaly the stack saw, with its first
// and its count, in the order first seen. The slice is the stack's own.
func (s *Stack) AnomalyKinds() []AnomalyKind { return s.kinds }

// Unwound returns how many frames were dropped because the stack pointer
// moved above them without a return (longjmp, exception unwinding).
func (s *Stack) Unwound() uint64 { return s.unwound }

// State is what a Stack knows at one point of a run, for checkpoints.
type State struct {
	frames    []Frame
	signals   []SignalMark
	parked    []segment
	dropped   []Frame
	droppedAt uint64
	leftAt    uint64
	anomalies int
	kinds     []AnomalyKind
	prev      Record
	prevFlow  arch.Flow
	havePrev  bool
	insn      uint64
	unwound   uint64
	followSP  uint64
}

// Save returns the stack's state.
func (s *Stack) Save() State {
	return State{frames: append([]Frame(nil), s.frames...), signals: append([]SignalMark(nil), s.signals...),
		parked: copySegments(s.parked), dropped: append([]Frame(nil), s.dropped...), droppedAt: s.droppedAt, leftAt: s.leftAt, anomalies: len(s.anomalies), kinds: append([]AnomalyKind(nil), s.kinds...),
		prev: s.prev, prevFlow: s.prevFlow, havePrev: s.havePrev, insn: s.insn, unwound: s.unwound, followSP: s.followSP}
}

// copySegments returns a copy of parked call stacks that shares nothing
// with them.
func copySegments(segs []segment) []segment {
	if len(segs) == 0 {
		return nil
	}
	out := make([]segment, len(segs))
	for i, seg := range segs {
		out[i] = segment{frames: append([]Frame(nil), seg.frames...), signals: append([]SignalMark(nil), seg.signals...)}
	}
	return out
}

// Restore puts the stack back into st, a state Save returned earlier in the
// same run. Version changes, as the frames did under any memo of them. The
// classes of instructions are forgotten: the code may have been different
// then.
func (s *Stack) Restore(st State) {
	clear(s.pages)
	s.recent = [recentPages]recentPage{}
	s.calls = [256]callMemo{}
	s.forgetEntries()
	s.frames = append(s.frames[:0], st.frames...)
	s.signals = append(s.signals[:0], st.signals...)
	s.parked, s.parkedFrames, s.resumeKeys, s.tops = nil, 0, nil, nil
	for _, seg := range copySegments(st.parked) {
		s.addParked(seg)
	}
	s.dropped, s.droppedAt, s.leftAt = append(s.dropped[:0], st.dropped...), st.droppedAt, st.leftAt
	s.anomalies = s.anomalies[:min(len(s.anomalies), st.anomalies)]
	s.kinds = append(s.kinds[:0], st.kinds...)
	s.prev, s.prevFlow, s.havePrev = st.prev, st.prevFlow, st.havePrev
	s.insn, s.unwound, s.followSP = st.insn, st.unwound, st.followSP
	s.recount()
	s.version++
}
