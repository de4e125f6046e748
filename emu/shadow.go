//go:build cgo

package emu

import "fmt"

// Frame is one activation on the shadow call stack, recorded by watching
// the call that created it. See the package documentation for the exact
// definitions of CFA, return address and FP per architecture.
type Frame struct {
	CallSite   uint64 // address of the call instruction
	ReturnAddr uint64 // address the callee returns to (call site + its length)
	CFA        uint64 // the callee's canonical frame address
	CallerFP   uint64 // the caller's frame pointer (rbp / x29) at the call
	Entry      uint64 // first instruction executed in the callee
	Insn       uint64 // instruction count when the callee started
}

// Anomaly is a departure from strict call/return nesting.
type Anomaly struct {
	Insn   uint64 // instruction count
	PC     uint64 // where execution went
	Kind   string // "unexpected-return", "return-skipped-frames"
	Detail string
}

// ShadowStack keeps the true call stack of a guest by watching every
// instruction: a call pushes a frame, a return pops the frame it returns
// to, and frames whose CFA lies below the stack pointer are dropped, as
// they are when longjmp or C++ exception unwinding abandons them. A tail
// call keeps its caller's frame, which is what the machine state shows too.
//
// Observe must see every executed instruction, in order, with the
// registers before it ran (a Record, as the C hook collects them).
type ShadowStack struct {
	// SameFunction, when set, tells whether two code addresses belong to
	// the same function (cold partitions included). It resolves the
	// AArch64 ambiguity of SP == CFA after an indirect jump: landing in the
	// function a frame returns to means that frame and those above it were
	// abandoned (a C++ landing pad, a longjmp); landing where no frame
	// returns is a tail call. Without it, the link register decides.
	SameFunction func(a, b uint64) bool

	arch      *Arch
	readCode  func(addr uint64, buf []byte) error
	frames    []Frame
	anomalies []Anomaly
	// Flow classes per 4 KiB page of code (flowUnknown where not yet
	// classified), with the last page used at hand: a slice index instead
	// of a map lookup for nearly every instruction.
	pages    map[uint64][]Flow
	lastPage uint64
	last     []Flow
	prev     Record
	prevFlow Flow
	havePrev bool
	insn     uint64
	unwound  uint64 // frames dropped by the SP rule
	version  uint64 // changes whenever frames does
	code     [16]byte
}

// NewShadowStack returns an empty shadow stack: the frame of the entry
// point is the outermost one and has no record.
func NewShadowStack(arch *Arch, readCode func(addr uint64, buf []byte) error) *ShadowStack {
	return &ShadowStack{arch: arch, readCode: readCode, pages: make(map[uint64][]Flow)}
}

// Observe updates the stack for the instruction about to run at r.PC.
func (s *ShadowStack) Observe(r Record) {
	s.insn++
	s.settle(r)
	s.prev, s.havePrev = r, true
	s.prevFlow = s.flow(r.PC, r.Size)
}

// Unobserve takes back the last Observe when that instruction did not run
// after all (the observer stopped the engine before it). Its record will
// be observed again when execution resumes.
func (s *ShadowStack) Unobserve() {
	if s.havePrev {
		s.insn--
		s.havePrev = false
	}
}

// Sync brings the stack up to date with the machine state r at a stop,
// where the next instruction has not been observed yet (emulation ended
// right after a call or return). Observing that instruction later, when
// execution resumes, does not apply the call or return twice.
func (s *ShadowStack) Sync(r Record) {
	s.settle(r)
	s.havePrev = false
}

// settle applies the effect of the previous instruction, now that r shows
// where it led, and drops abandoned frames.
func (s *ShadowStack) settle(r Record) {
	n0, called := len(s.frames), s.havePrev && s.prevFlow == FlowCall
	jumped := false // control arrived by an indirect jump or a return to an unexpected place
	if s.havePrev {
		p := &s.prev
		switch s.prevFlow {
		case FlowCall:
			// A call leaves the caller's SP (before the call) as the
			// callee's CFA on both architectures: x86-64 pushes the return
			// address just below it; AArch64 leaves SP alone.
			s.frames = append(s.frames, Frame{
				CallSite:   p.PC,
				ReturnAddr: p.PC + uint64(p.Size),
				CFA:        p.SP,
				CallerFP:   p.FP,
				Entry:      r.PC,
				Insn:       s.insn,
			})
		case FlowRet:
			jumped = !s.pop(r)
		case FlowJump:
			jumped = true
		}
	}
	// Frames the stack pointer has left are gone (longjmp, exception
	// unwinding).
	for n := len(s.frames); n > 0 && s.abandoned(&s.frames[n-1], r, jumped); n-- {
		s.frames = s.frames[:n-1]
		s.unwound++
	}
	// After an indirect jump on AArch64 with SP at the top frame's CFA, the
	// landing function tells which frames are left: a landing pad or a
	// longjmp target lies in the function a frame returns to (that frame
	// and those above it are gone); a tail call lands where no frame
	// returns.
	if jumped && s.SameFunction != nil && s.arch.RA >= 0 {
		if n := len(s.frames); n > 0 && r.SP == s.frames[n-1].CFA {
			for k := n - 1; k >= 0; k-- {
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
	if called || len(s.frames) != n0 {
		s.version++
	}
}

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
func (s *ShadowStack) abandoned(f *Frame, r Record, jumped bool) bool {
	switch {
	case r.SP > f.CFA:
		return true
	case r.SP < f.CFA:
		return false
	case s.arch.RA < 0:
		return true
	}
	if !jumped || s.SameFunction != nil {
		return false // with SameFunction, settle decided already
	}
	return stripPAC(r.RA) != f.ReturnAddr
}

// stripPAC removes a pointer authentication code from a user-space code
// address (48-bit virtual addresses, as Linux configures AArch64).
func stripPAC(a uint64) uint64 { return a & (1<<48 - 1) }

// pop handles a return that landed at r.PC; false if no frame expected it.
func (s *ShadowStack) pop(r Record) bool {
	n := len(s.frames)
	for i := n - 1; i >= 0; i-- {
		if s.frames[i].ReturnAddr == r.PC {
			if i != n-1 {
				s.anomalies = append(s.anomalies, Anomaly{Insn: s.insn, PC: r.PC, Kind: "return-skipped-frames",
					Detail: fmt.Sprintf("return from %#x to %#x skipped %d frame(s)", s.prev.PC, r.PC, n-1-i)})
			}
			s.frames = s.frames[:i]
			return true
		}
	}
	detail := fmt.Sprintf("return from %#x to %#x", s.prev.PC, r.PC)
	if n > 0 {
		detail += fmt.Sprintf(", expected %#x", s.frames[n-1].ReturnAddr)
		s.frames = s.frames[:n-1]
	} else {
		detail += " with no frame on the shadow stack"
	}
	s.anomalies = append(s.anomalies, Anomaly{Insn: s.insn, PC: r.PC, Kind: "unexpected-return", Detail: detail})
	return false
}

const flowUnknown = Flow(0xff)

// flow classifies the instruction at pc, once per address.
func (s *ShadowStack) flow(pc uint64, size uint32) Flow {
	page := pc >> 12
	if s.last == nil || page != s.lastPage {
		p, ok := s.pages[page]
		if !ok {
			p = make([]Flow, 1<<12)
			for i := range p {
				p[i] = flowUnknown
			}
			s.pages[page] = p
		}
		s.lastPage, s.last = page, p
	}
	f := s.last[pc&(1<<12-1)]
	if f == flowUnknown {
		f = s.classifyAt(pc, size)
		s.last[pc&(1<<12-1)] = f
	}
	return f
}

// classifyAt reads and classifies the instruction at pc.
func (s *ShadowStack) classifyAt(pc uint64, size uint32) Flow {
	n := int(size)
	if n <= 0 || n > len(s.code) {
		n = len(s.code)
	}
	f := FlowBad
	if err := s.readCode(pc, s.code[:n]); err == nil {
		f, _ = s.arch.classify(s.code[:n])
	}
	return f
}

// Frames returns the frames, outermost first. The slice is the stack's
// own: copy it to keep it.
func (s *ShadowStack) Frames() []Frame { return s.frames }

// Version returns a number that changes whenever the frames do.
func (s *ShadowStack) Version() uint64 { return s.version }

// Depth returns the number of frames above the outermost function.
func (s *ShadowStack) Depth() int { return len(s.frames) }

// Anomalies returns the departures from call/return nesting seen so far.
func (s *ShadowStack) Anomalies() []Anomaly { return s.anomalies }

// Unwound returns how many frames were dropped because the stack pointer
// moved above them without a return (longjmp, exception unwinding).
func (s *ShadowStack) Unwound() uint64 { return s.unwound }
