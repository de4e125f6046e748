package cfi

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
	"strconv"

	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/sframe"
)

// Section names the CFI section an FDE came from.
type Section uint8

// CFI sections.
const (
	EHFrame    Section = iota // .eh_frame [LSB 5.0]
	DebugFrame                // .debug_frame [DWARF5 6.4]
)

func (s Section) String() string {
	if s == DebugFrame {
		return ".debug_frame"
	}
	return ".eh_frame"
}

// ColKind is the DWARF rule of one column of a row, as the CFA program
// left it [DWARF5 6.4.1].
type ColKind uint8

// Column rules. ColUnmentioned is a register no instruction of the CIE or
// FDE gave a rule (same value, as unwinders treat it); readelf prints it
// as "u", like ColUndefined.
const (
	ColUnmentioned   ColKind = iota
	ColUndefined             // DW_CFA_undefined
	ColSame                  // DW_CFA_same_value
	ColOffset                // saved at CFA+Off: DW_CFA_offset and friends
	ColValOffset             // the value is CFA+Off: DW_CFA_val_offset
	ColRegister              // held in register Reg: DW_CFA_register
	ColExpression            // saved at the address Expr computes: DW_CFA_expression
	ColValExpression         // the value Expr computes: DW_CFA_val_expression
	ColCFAReg                // the CFA column: Reg+Off (DW_CFA_def_cfa)
	ColCFAExpression         // the CFA column: Expr (DW_CFA_def_cfa_expression)
)

var colNames = [...]string{"unmentioned", "undefined", "same", "offset", "val_offset", "register",
	"expression", "val_expression", "cfa_reg", "cfa_expression"}

func (k ColKind) String() string {
	if int(k) < len(colNames) {
		return colNames[k]
	}
	return "ColKind(" + strconv.Itoa(int(k)) + ")"
}

// A Col is one column of a row: the CFA, or a register's rule.
type Col struct {
	Kind ColKind
	Reg  sframe.Reg // ColRegister, ColCFAReg
	Off  int64      // ColOffset, ColValOffset, ColCFAReg
	Expr []byte     // ColExpression, ColValExpression, ColCFAExpression
}

// A Row holds from Addr up to the next row's Addr (the last row: to the
// FDE's end).
type Row struct {
	Addr   uint64
	CFA    Col
	RA, FP Col
	// SignedRA is AArch64's RA_SIGN_STATE: the return address carries a
	// pointer-authentication code.
	SignedRA bool
}

// PCInvariant reports whether the row's rules are the same at every PC
// it holds: only a DWARF expression can depend on the PC (ld's .plt CFA).
func (r *Row) PCInvariant() bool {
	return r.CFA.Kind != ColCFAExpression && !r.RA.Kind.expr() && !r.FP.Kind.expr()
}

func (k ColKind) expr() bool { return k == ColExpression || k == ColValExpression }

// An FDE is one frame description entry with its CIE's facts and its
// evaluated rows.
type FDE struct {
	Section Section
	// Signal: the CIE's augmentation has 'S' (a signal trampoline).
	Signal bool
	// RAReg is the CIE's return-address column.
	RAReg  sframe.Reg
	Off    int64 // offset of the FDE in its section
	CIEOff int64 // offset of its CIE
	// Start and End bound the code the FDE covers: [Start, End).
	Start, End uint64
	// LSDA is the address of the FDE's language-specific data area (the
	// CIE's 'L' augmentation: C++'s .gcc_except_table), 0 when it has
	// none.
	LSDA uint64

	// The CFA program, evaluated on first use (Rows, Err, RowAt) and
	// kept (Table.Eval evaluates it without keeping it). A Table holds
	// many FDEs: the fields are few.
	t    *Table
	cie  *cie
	prog []byte
	kept *keptRows
}

// keptRows are an FDE's evaluated rows.
type keptRows struct {
	rows  []Row
	err   error
	errAt uint64 // where the program stopped when err is set: the last row holds only up to it
}

// Augmentation is the augmentation string of the FDE's CIE.
func (f *FDE) Augmentation() string {
	if f.cie == nil {
		return ""
	}
	return f.cie.augmentation
}

// Rows returns the FDE's rows, evaluating its CFA program on first use.
func (f *FDE) Rows() []Row {
	return f.eval().rows
}

// Err is why the CFA program could not be evaluated past the last row
// (nil when it could be to its end): PCs after that row have no row.
func (f *FDE) Err() error {
	return f.eval().err
}

func (f *FDE) eval() *keptRows {
	if f.kept == nil {
		f.kept = &keptRows{}
		if f.t != nil && f.cie != nil {
			f.kept.rows, f.kept.errAt, f.kept.err = f.t.rows(f.cie, f, f.prog)
		}
	}
	return f.kept
}

// Contains reports whether pc lies in the FDE's range.
func (f *FDE) Contains(pc uint64) bool { return pc-f.Start < f.End-f.Start }

// RowAt returns the index of the row that holds at pc, or -1 (pc outside
// the FDE, before its first row, or past a program error).
func (f *FDE) RowAt(pc uint64) int {
	if !f.Contains(pc) {
		return -1
	}
	k := f.eval()
	return rowAt(k.rows, k.err, k.errAt, pc)
}

func rowAt(rows []Row, err error, errAt, pc uint64) int {
	i := sort.Search(len(rows), func(i int) bool { return rows[i].Addr > pc }) - 1
	if i < 0 {
		return -1
	}
	if err != nil && i == len(rows)-1 && errAt <= pc {
		return -1
	}
	return i
}

// Evaluated is an FDE's CFA program evaluated by Table.Eval into a
// buffer of the caller's: the FDE keeps nothing.
type Evaluated struct {
	FDE  *FDE
	Rows []Row
	// Err is why the program could not be evaluated past the last row
	// (FDE.Err).
	Err   error
	errAt uint64
}

// RowAt returns the index of the row that holds at pc, or -1, as
// FDE.RowAt does.
func (e *Evaluated) RowAt(pc uint64) int {
	if e.FDE == nil || !e.FDE.Contains(pc) {
		return -1
	}
	return rowAt(e.Rows, e.Err, e.errAt, pc)
}

// Eval evaluates f's CFA program into *buf (its contents replaced; it
// may grow), without keeping the rows in f: the rows FDE.Rows would
// return, for a caller that looks at each FDE once and reuses one
// buffer. Rows an earlier FDE.Rows kept are used as they are.
func (t *Table) Eval(f *FDE, buf *[]Row) Evaluated {
	e := Evaluated{FDE: f}
	switch {
	case f.kept != nil:
		e.Rows, e.Err, e.errAt = f.kept.rows, f.kept.err, f.kept.errAt
	case f.cie != nil:
		*buf, e.errAt, e.Err = t.evalInto(f.cie, f, f.prog, (*buf)[:0])
		e.Rows = *buf
	}
	return e
}

// A Table is the CFI of one ELF file: every FDE with its rows, sorted by
// start address (.eh_frame's before .debug_frame's at the same start).
// An FDE's CFA program runs on first use, so a Table is not safe for
// concurrent use.
type Table struct {
	Arch *arch.Arch
	FDEs []FDE
	// Errs are the entries that could not be read, each skipped.
	Errs  []error
	order binary.ByteOrder
	// ends[i] is max(FDEs[0..i].End), for Find with overlapping FDEs.
	ends []uint64
	// rowBuf holds the rows of the FDEs evaluated so far, each FDE's
	// rows a slice of it: one allocation for many small FDEs.
	rowBuf []Row
	// runState and runStack are run's work space.
	runState state
	runStack []state
}

// Find returns the FDE covering pc, preferring .eh_frame over
// .debug_frame and, among FDEs of one section that overlap, the one with
// the greatest start; nil when there is none.
func (t *Table) Find(pc uint64) *FDE {
	i := sort.Search(len(t.FDEs), func(i int) bool { return t.FDEs[i].Start > pc }) - 1
	var found *FDE
	for ; i >= 0 && t.ends[i] > pc; i-- {
		f := &t.FDEs[i]
		if !f.Contains(pc) {
			continue
		}
		if f.Section == EHFrame {
			return f
		}
		if found == nil {
			found = f
		}
	}
	return found
}

func (t *Table) index() {
	less := func(a, b *FDE) int {
		if a.Start != b.Start {
			return cmp.Compare(a.Start, b.Start)
		}
		return cmp.Compare(a.Section, b.Section)
	}
	sorted := true
	for i := 1; i < len(t.FDEs) && sorted; i++ {
		sorted = less(&t.FDEs[i-1], &t.FDEs[i]) <= 0
	}
	if !sorted {
		// Sort indexes, then move each FDE (a large struct) once.
		perm := make([]int32, len(t.FDEs))
		for i := range perm {
			perm[i] = int32(i)
		}
		slices.SortStableFunc(perm, func(i, j int32) int { return less(&t.FDEs[i], &t.FDEs[j]) })
		// In place, cycle by cycle: position j gets the FDE at perm[j].
		for i := range perm {
			if perm[i] == int32(i) {
				continue
			}
			tmp := t.FDEs[i]
			j := int32(i)
			for {
				k := perm[j]
				perm[j] = j
				if k == int32(i) {
					t.FDEs[j] = tmp
					break
				}
				t.FDEs[j] = t.FDEs[k]
				j = k
			}
		}
	}
	t.ends = make([]uint64, len(t.FDEs))
	var end uint64
	for i := range t.FDEs {
		end = max(end, t.FDEs[i].End)
		t.ends[i] = end
	}
}

// A Value is one recovered value in SFrame's vocabulary, or why the CFI's
// rule for it is not expressible as one (Why != "").
type Value struct {
	Rule sframe.Rule
	Why  string
}

// Known reports whether the value has a rule.
func (v Value) Known() bool { return v.Why == "" }

// Format renders the value with the ABI's register names, or "? (why)".
func (v Value) Format(abi sframe.ABI) string {
	if v.Why != "" {
		return "? (" + v.Why + ")"
	}
	return v.Rule.Format(abi)
}

// Rules is what the CFI says at one PC.
type Rules struct {
	CFA, RA, FP Value
	SignedRA    bool
}

// Outermost reports whether the return address is undefined: the frame
// is the outermost one.
func (r *Rules) Outermost() bool {
	return r.RA.Why == "" && r.RA.Rule.Kind == sframe.RuleUndefined
}

// Rules converts row i of f into rules at pc.
func (t *Table) Rules(f *FDE, i int, pc uint64) Rules {
	return t.RowRules(&f.Rows()[i], pc)
}

// RowRules converts row into rules at pc (a PC the row holds at).
func (t *Table) RowRules(row *Row, pc uint64) Rules {
	r := Rules{SignedRA: row.SignedRA}
	switch row.CFA.Kind {
	case ColCFAReg:
		r.CFA.Rule = sframe.Rule{Kind: sframe.RuleExpr, Reg: row.CFA.Reg, Offset: int32(row.CFA.Off)}
		if int64(r.CFA.Rule.Offset) != row.CFA.Off {
			r.CFA = Value{Why: fmt.Sprintf("CFA offset %d does not fit in 32 bits", row.CFA.Off)}
		}
	case ColCFAExpression:
		v, err := t.eval(row.CFA.Expr, pc, false)
		if err != nil {
			r.CFA = Value{Why: "DW_CFA_def_cfa_expression " + err.Error()}
		} else {
			r.CFA.Rule = v
		}
	default:
		r.CFA = Value{Why: "no CFA rule"}
	}
	r.RA = t.colRule(row.RA, pc)
	r.FP = t.colRule(row.FP, pc)
	return r
}

// colRule converts a register's column into a rule at pc.
func (t *Table) colRule(c Col, pc uint64) Value {
	switch c.Kind {
	case ColUnmentioned, ColSame:
		return Value{Rule: sframe.Rule{Kind: sframe.RuleSame}}
	case ColUndefined:
		return Value{Rule: sframe.Rule{Kind: sframe.RuleUndefined}}
	case ColOffset, ColValOffset:
		r := sframe.Rule{Kind: sframe.RuleExpr, Reg: sframe.RegCFA, Offset: int32(c.Off), Deref: c.Kind == ColOffset}
		if int64(r.Offset) != c.Off {
			return Value{Why: fmt.Sprintf("offset %d does not fit in 32 bits", c.Off)}
		}
		return Value{Rule: r}
	case ColRegister:
		return Value{Rule: sframe.Rule{Kind: sframe.RuleExpr, Reg: c.Reg}}
	case ColExpression, ColValExpression:
		v, err := t.eval(c.Expr, pc, true)
		if err != nil {
			name := "DW_CFA_expression "
			if c.Kind == ColValExpression {
				name = "DW_CFA_val_expression "
			}
			return Value{Why: name + err.Error()}
		}
		if c.Kind == ColExpression {
			if v.Deref {
				return Value{Why: "DW_CFA_expression: a value loaded from a loaded address"}
			}
			v.Deref = true
		}
		return Value{Rule: v}
	}
	return Value{Why: "rule " + c.Kind.String()}
}
