package check

import "strconv"

// Kind classifies a problem.
type Kind uint8

// Problem kinds: per PC (the SFrame row against a source), then findings
// about the whole binary.
const (
	KindCFA          Kind = iota // the CFA rule differs
	KindRA                       // the return address rule differs
	KindFP                       // the caller's FP rule differs
	KindMangledRA                // AArch64: the RA's signing differs (FRE mangled-RA bit vs RA_SIGN_STATE)
	KindUnterminated             // the source marks the outermost frame (RA undefined), SFrame does not
	KindOutermost                // SFrame marks the outermost frame, the source does not
	KindNoRow                    // the FDE covers the PC but has no row for it
	KindCallAtEnd                // a call ends its function: the return address lies outside it
	KindOverlap                  // two FDEs overlap
	KindUncovered                // part of a function has CFI but no SFrame row, while its FDE covers the rest
	KindPadding                  // an FDE covers bytes in no function and without CFI
	KindPCMask                   // a PCMASK FDE's size is not a multiple of its repetition size
	KindSignal                   // the V3 signal-frame bit differs from the CFI's 'S' augmentation
	numKinds
)

var kindNames = [numKinds]string{"cfa", "ra", "fp", "mangled-ra", "unterminated", "outermost", "no-row",
	"call-at-end", "overlap", "uncovered", "padding", "pcmask-size", "signal"}

func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// perPC reports whether problems of the kind are found at single PCs by
// comparing rows (the others are findings about functions or the binary).
func (k Kind) perPC() bool { return k <= KindNoRow }
