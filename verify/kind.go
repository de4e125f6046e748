package verify

import "fmt"

// Kind classifies the outcome of one check.
type Kind uint8

// Outcomes.
const (
	OK          Kind = iota
	NoFDE            // no SFrame data for the topmost PC (no FDE, or no row): a coverage gap
	MismatchCFA      // a frame's CFA differs from the truth
	MismatchRA       // a frame's return address differs
	MismatchFP       // the caller's recovered FP differs
	UnwindError      // the unwinder failed (RA not recoverable, unreadable memory, ...)
	TooShort         // the unwind ended (outermost) while the true stack goes on
	// Limited: the row bases the CFA on a register SFrame cannot recover
	// in a caller frame (a FLEX rule on, say, rbx): the unwind cannot go
	// on there. A limit of the format, not a wrong row.
	Limited
	// Unterminated: every true frame was right, but the true outermost
	// function's row does not mark the end of the stack (RA undefined), so
	// the unwind goes on past it with a made-up return address (Got, when
	// one was read). GNU as 2.40 and 2.44 (SFrame V1, V2) cannot mark it.
	Unterminated
	// EndedEarly: the unwind found every frame right up to a return
	// address that no SFrame row covers, while the function it returns to
	// has SFrame data (its call site is covered): the chain ends there for
	// every consumer that looks return addresses up as they are (libsframe,
	// glibc, the kernel). Typically a noreturn call that is the last
	// instruction of its function: the return address lies in padding.
	EndedEarly
	// Cut: the walk reached the --max-frames limit (Options.MaxFrames)
	// before its end. Every frame up to the limit was right; those beyond
	// it were not compared. Neither a failure nor ok: a run with cut walks
	// is incomplete.
	Cut
	// SignalGap: every frame was right up to a signal frame (the true
	// stack has a delivery there: a handler returned to a signal
	// trampoline) that the SFrame data does not mark: the trampoline has
	// no SFrame data (glibc's __restore_rt, the AArch64 vDSO's
	// __kernel_rt_sigreturn: no distribution ships .sframe for them), or
	// rows without a signal flag, which SFrame V1 and V2 cannot express.
	// The interrupted code's frames beyond it were not compared. A
	// coverage gap of the data, neither a failure nor a listed problem;
	// counted in the report's summary.
	SignalGap
	// Untracked: every frame was right up to a true frame the shadow
	// stack cannot vouch for (shadow.Frame.Unsure: a callee that took its
	// return address off the stack, in code without symbols to tell
	// whether it still runs; a call to its own return address without
	// symbols): that frame and those beyond it were not compared. Neither
	// a failure nor ok: a run with any is incomplete, and the report says
	// where the shadow stack lost track (Report.LostTrack).
	Untracked
)

var kindNames = [...]string{"ok", "no-fde", "cfa", "ra", "fp", "unwind-error", "too-short", "limited", "unterminated", "ended-early", "cut", "signal-gap", "untracked"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// Failure reports whether the outcome means the SFrame data gave a wrong
// or no unwind for frames that exist: a mismatch, an unwinder error, or a
// chain that ends too early.
func (k Kind) Failure() bool {
	switch k {
	case MismatchCFA, MismatchRA, MismatchFP, UnwindError, TooShort, EndedEarly:
		return true
	}
	return false
}

// Problem reports whether the outcome is listed in a report: failures, and
// unterminated chains (right frames, but no end marker).
func (k Kind) Problem() bool { return k.Failure() || k == Unterminated || k == Limited }
