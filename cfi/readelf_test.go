package cfi

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"debug/elf"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/internal/testcorpus"
)

// readelfFDE is one FDE of `readelf --debug-dump=frames-interp` output:
// its range and its rows, each cell as readelf prints it, by column name
// ("LOC" is the address, then "CFA", register names and "ra").
type readelfFDE struct {
	off        int64
	start, end uint64
	rows       []map[string]string
}

// parseReadelf reads the .eh_frame part of readelf -wF output. An FDE
// without a table of its own has its CIE's (readelf prints it at the CIE,
// at LOC 0).
func parseReadelf(t *testing.T, r io.Reader) []readelfFDE {
	t.Helper()
	var fdes []readelfFDE
	cies := map[int64]*[]map[string]string{}
	var cur *[]map[string]string
	var cols []string
	inherited := false
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	section := ""
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		// A register cell is "r9 (r9)": keep the name in parentheses.
		for i := 1; i < len(f); i++ {
			if strings.HasPrefix(f[i], "(") && strings.HasSuffix(f[i], ")") {
				f[i-1] = strings.Trim(f[i], "()")
				f = append(f[:i], f[i+1:]...)
				i--
			}
		}
		switch {
		case strings.HasPrefix(line, "Contents of the "):
			section = f[3]
		case section != ".eh_frame" || len(f) == 0:
		case len(f) >= 4 && f[3] == "CIE":
			off, _ := strconv.ParseInt(f[0], 16, 64)
			cur = new([]map[string]string)
			cies[off] = cur
			inherited = false
		case len(f) >= 6 && f[3] == "FDE":
			off, _ := strconv.ParseInt(f[0], 16, 64)
			cieOff, _ := strconv.ParseInt(strings.TrimPrefix(f[4], "cie="), 16, 64)
			rng := strings.Split(strings.TrimPrefix(f[5], "pc="), "..")
			start, _ := strconv.ParseUint(rng[0], 16, 64)
			end, _ := strconv.ParseUint(rng[1], 16, 64)
			fdes = append(fdes, readelfFDE{off: off, start: start, end: end})
			fde := &fdes[len(fdes)-1]
			cur = &fde.rows
			// Until the FDE prints a table of its own, it has its CIE's.
			inherited = false
			if rows := cies[cieOff]; rows != nil && len(*rows) > 0 {
				row := maps.Clone((*rows)[0])
				row["LOC"] = fmt.Sprintf("%016x", start)
				fde.rows = append(fde.rows, row)
				inherited = true
			}
		case f[0] == "LOC":
			cols = f
			if inherited {
				*cur = nil
				inherited = false
			}
		case cur != nil && len(f) == len(cols) && len(f[0]) == 16:
			row := map[string]string{}
			for i, c := range cols {
				row[c] = f[i]
			}
			*cur = append(*cur, row)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return fdes
}

// readelfCell renders a column of a row as readelf's frames-interp table
// does (binutils dwarf.c frame_display_row).
func (tab *Table) readelfCell(c Col) string {
	switch c.Kind {
	case ColUnmentioned, ColUndefined:
		return "u"
	case ColSame:
		return "s"
	case ColOffset:
		return fmt.Sprintf("c%+d", c.Off)
	case ColValOffset:
		return fmt.Sprintf("v%+d", c.Off)
	case ColRegister:
		return tab.Arch.RegName(c.Reg)
	case ColExpression, ColCFAExpression:
		return "exp"
	case ColValExpression:
		return "vexp"
	case ColCFAReg:
		return fmt.Sprintf("%s%+d", tab.Arch.RegName(c.Reg), c.Off)
	}
	return "?"
}

// TestReadelf compares the rows of every FDE of corpus binaries with GNU
// readelf's (testdata/*.wF, made by testdata/mkgolden.sh): the CFA, the
// frame pointer's and the return address's columns, at every row address
// of either side.
func TestReadelf(t *testing.T) {
	dir := testcorpus.Dir(t)
	goldens, _ := filepath.Glob("testdata/*.wF*")
	if len(goldens) == 0 {
		t.Fatal("no golden files in testdata")
	}
	for _, g := range goldens {
		name := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(g), ".gz"), ".wF")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(g)
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasSuffix(g, ".gz") {
				zr, err := gzip.NewReader(bytes.NewReader(data))
				if err != nil {
					t.Fatal(err)
				}
				if data, err = io.ReadAll(zr); err != nil {
					t.Fatal(err)
				}
			}
			want := parseReadelf(t, bytes.NewReader(data))
			ef, err := elf.Open(filepath.Join(dir, strings.ReplaceAll(name, "_", "/")))
			if err != nil {
				t.Fatal(err)
			}
			defer ef.Close()
			tab, err := Load(ef)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range tab.Errs {
				t.Errorf("entry skipped: %v", e)
			}
			got := map[int64]*FDE{}
			for i := range tab.FDEs {
				if f := &tab.FDEs[i]; f.Section == EHFrame {
					got[f.Off] = f
				}
			}
			if len(got) != len(want) {
				t.Errorf("%d FDEs, readelf has %d", len(got), len(want))
			}
			fpName := tab.Arch.RegName(tab.Arch.FP)
			rows := 0
			for _, w := range want {
				f := got[w.off]
				if f == nil {
					t.Errorf("FDE at %#x: missing", w.off)
					continue
				}
				if f.Start != w.start || f.End != w.end {
					t.Errorf("FDE at %#x: [%#x, %#x), readelf [%#x, %#x)", w.off, f.Start, f.End, w.start, w.end)
				}
				if f.Err() != nil {
					t.Errorf("FDE at %#x: %v", w.off, f.Err())
				}
				// want(pc): readelf's last row at or below pc.
				wantAt := func(pc uint64) map[string]string {
					var row map[string]string
					for _, r := range w.rows {
						if loc, _ := strconv.ParseUint(r["LOC"], 16, 64); loc <= pc {
							row = r
						}
					}
					return row
				}
				check := func(pc uint64) {
					rows++
					wr := wantAt(pc)
					i := f.RowAt(pc)
					if wr == nil || i < 0 {
						t.Errorf("FDE at %#x, pc %#x: row %d, readelf %v", w.off, pc, i, wr)
						return
					}
					r := &f.Rows()[i]
					cell := func(col string) string {
						if v, ok := wr[col]; ok {
							return v
						}
						return "u" // a register readelf has no column for: no rule
					}
					for _, c := range []struct {
						name string
						col  Col
					}{{"CFA", r.CFA}, {fpName, r.FP}, {"ra", r.RA}} {
						if g, w := tab.readelfCell(c.col), cell(c.name); g != w {
							t.Errorf("FDE at %#x, pc %#x: %s %s, readelf %s", f.Off, pc, c.name, g, w)
						}
					}
				}
				for _, r := range w.rows {
					loc, _ := strconv.ParseUint(r["LOC"], 16, 64)
					check(loc)
				}
				for _, r := range f.Rows() {
					check(r.Addr)
				}
			}
			t.Logf("%d FDEs, %d row addresses compared", len(want), rows)
		})
	}
}
