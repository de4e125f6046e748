package sframe

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors for expected outcomes. Callers test them with errors.Is.
var (
	// ErrNoSection means the file has no .sframe section (nor a
	// PT_GNU_SFRAME segment).
	ErrNoSection = errors.New("sframe: no .sframe section")
	// ErrNoFDE means no function descriptor covers the PC.
	ErrNoFDE = errors.New("sframe: no FDE covers the PC")
	// ErrNoFRE means the PC's function has no FRE covering the PC (for
	// example a V3 FDE with zero FREs, or a first FRE starting after it).
	ErrNoFRE = errors.New("sframe: no FRE covers the PC")
)

// Check names the validation rule a FormatError violates; the names follow
// the groups of the fact sheet's list of checks [SFrame §6.2].
type Check string

// Validation rule groups.
const (
	CheckHeader   Check = "header"   // §6.2.1: magic, version, ABI, flags, byte order
	CheckLayout   Check = "layout"   // §6.2.2: sub-sections inside the section, zero padding
	CheckFDE      Check = "fde"      // §6.2.3: FDE fields
	CheckOrdering Check = "ordering" // §6.2.4: sorted, non-overlapping functions
	CheckFRE      Check = "fre"      // §6.2.5: FRE fields
	CheckTotals   Check = "totals"   // §6.2.6: header counts match the content
	CheckV3       Check = "v3"       // §6.2.7: V3-only requirements
)

// A FormatError reports malformed SFrame data. Off is the byte offset in the
// section of the offending field, Field names it (for example
// "FDE[3].func_info" or "FDE[3].FRE[1].fre_info"), and Val is its value.
type FormatError struct {
	Off   int64
	Check Check
	Field string
	Msg   string
	Val   any
	// Warn marks something suspicious that GNU tools still accept (for
	// example a zero-sized function); decoding and lookup are unaffected.
	Warn bool
}

func (e *FormatError) Error() string {
	var b strings.Builder
	if e.Warn {
		b.WriteString("sframe: warning: ")
	} else {
		b.WriteString("sframe: ")
	}
	fmt.Fprintf(&b, "offset %#x", e.Off)
	if e.Field != "" {
		b.WriteString(": ")
		b.WriteString(e.Field)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	if e.Val != nil {
		switch v := e.Val.(type) {
		case int, int8, int16, int32, int64:
			fmt.Fprintf(&b, " (%d)", v)
		case string:
			fmt.Fprintf(&b, " (%s)", v)
		default:
			fmt.Fprintf(&b, " (%#x)", v)
		}
	}
	return b.String()
}

// Errors is a list of format errors found while decoding or validating one
// section, in section order. It unwraps to its elements, so errors.As finds
// the first *FormatError.
type Errors []*FormatError

func (l Errors) Error() string {
	switch len(l) {
	case 0:
		return "sframe: no errors"
	case 1:
		return l[0].Error()
	}
	return fmt.Sprintf("%s (and %d more)", l[0].Error(), len(l)-1)
}

// Unwrap returns the individual errors.
func (l Errors) Unwrap() []error {
	errs := make([]error, len(l))
	for i, e := range l {
		errs[i] = e
	}
	return errs
}

// err returns l as an error, or nil when it is empty.
func (l Errors) err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}
