package lsda

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/cfi"
	"github.com/sframesim/sframesim/internal/testcorpus"
)

// TestCorpusTables: the LSDAs of corpus binaries equal their contents
// decoded by hand from `readelf -x .gcc_except_table` (the LSDA pointers
// from `readelf -wf`'s augmentation data: pc-relative sdata4).
func TestCorpusTables(t *testing.T) {
	const omit = EncOmit
	tests := []struct {
		bin  string
		want []Table // by FDE address order
	}{
		{"v1/x86-64/except-O2-dynamic", []Table{
			// thrower(int, long) [clone .cold]: ff ff 01 08 | 3a 32 6c 00 | 7c 05 00 00
			{Addr: 0x2485, LPStart: 0x10d0, TTypeEnc: omit, CallSiteEnc: EncULEB128, Actions: 0x2491, CallSites: []CallSite{
				{Start: 0x10d0 + 0x3a, End: 0x10d0 + 0x3a + 0x32, LandingPad: 0x10d0 + 0x6c},
				{Start: 0x10d0 + 0x7c, End: 0x10d0 + 0x7c + 5},
			}},
			// middle(int, long) [clone .constprop.0] [clone .cold]: ff 9b 15 01 08 | 13 05 18 00 | 31 05 00 00
			{Addr: 0x24a8, LPStart: 0x1151, TTypeEnc: 0x9b, TTypeEnd: 0x24ab + 0x15, CallSiteEnc: EncULEB128, Actions: 0x24b5, CallSites: []CallSite{
				{Start: 0x1151 + 0x13, End: 0x1151 + 0x18, LandingPad: 0x1151 + 0x18},
				{Start: 0x1151 + 0x31, End: 0x1151 + 0x36},
			}},
			// outer(long) [clone .cold]: ff 9b 1d 01 0c | 0c 05 00 00 | 54 05 68 00 | 73 05 00 00
			{Addr: 0x24d8, LPStart: 0x119e, TTypeEnc: 0x9b, TTypeEnd: 0x24db + 0x1d, CallSiteEnc: EncULEB128, Actions: 0x24e9, CallSites: []CallSite{
				{Start: 0x119e + 0x0c, End: 0x119e + 0x11},
				{Start: 0x119e + 0x54, End: 0x119e + 0x59, LandingPad: 0x119e + 0x68},
				{Start: 0x119e + 0x73, End: 0x119e + 0x78},
			}},
			// thrower(int, long): ff ff 01 05 | 71 05 84 01 00
			{Addr: 0x247c, LPStart: 0x1390, TTypeEnc: omit, CallSiteEnc: EncULEB128, Actions: 0x2485, CallSites: []CallSite{
				{Start: 0x1390 + 0x71, End: 0x1390 + 0x76, LandingPad: 0x1390 + 0x84},
			}},
			// middle(int, long) [clone .constprop.0]: ff 9b 11 01 04 | 14 05 2d 03
			{Addr: 0x2494, LPStart: 0x1420, TTypeEnc: 0x9b, TTypeEnd: 0x2497 + 0x11, CallSiteEnc: EncULEB128, Actions: 0x249d, CallSites: []CallSite{
				{Start: 0x1420 + 0x14, End: 0x1420 + 0x19, LandingPad: 0x1420 + 0x2d, Action: 3},
			}},
			// outer(long): ff 9b 15 01 04 | 05 05 10 03
			{Addr: 0x24c0, LPStart: 0x1460, TTypeEnc: 0x9b, TTypeEnd: 0x24c3 + 0x15, CallSiteEnc: EncULEB128, Actions: 0x24c9, CallSites: []CallSite{
				{Start: 0x1460 + 5, End: 0x1460 + 10, LandingPad: 0x1460 + 0x10, Action: 3},
			}},
		}},
		{"v3/aarch64/except-O2-dynamic", []Table{
			// thrower(int, long): ff ff 01 10 | 7c 04 b0 01 00 | cc 01 04 00 00 | fc 01 2c b0 01 00
			{Addr: 0x145c, LPStart: 0xdc0, TTypeEnc: omit, CallSiteEnc: EncULEB128, Actions: 0x1470, CallSites: []CallSite{
				{Start: 0xdc0 + 0x7c, End: 0xdc0 + 0x80, LandingPad: 0xdc0 + 0xb0},
				{Start: 0xdc0 + 0xcc, End: 0xdc0 + 0xd0},
				{Start: 0xdc0 + 0xfc, End: 0xdc0 + 0x128, LandingPad: 0xdc0 + 0xb0},
			}},
			// middle(int, long) [clone .constprop.0]: ff 9b 19 01 0d | 24 04 50 03 | 64 04 68 00 | 90 01 04 00 00
			{Addr: 0x1470, LPStart: 0xee8, TTypeEnc: 0x9b, TTypeEnd: 0x1473 + 0x19, CallSiteEnc: EncULEB128, Actions: 0x1482, CallSites: []CallSite{
				{Start: 0xee8 + 0x24, End: 0xee8 + 0x28, LandingPad: 0xee8 + 0x50, Action: 3},
				{Start: 0xee8 + 0x64, End: 0xee8 + 0x68, LandingPad: 0xee8 + 0x68},
				{Start: 0xee8 + 0x90, End: 0xee8 + 0x94},
			}},
			// outer(long): ff 9b 21 01 11 | 08 04 14 03 | 24 04 00 00 | 68 04 78 00 | 84 01 04 00 00
			{Addr: 0x148c, LPStart: 0xf90, TTypeEnc: 0x9b, TTypeEnd: 0x148f + 0x21, CallSiteEnc: EncULEB128, Actions: 0x14a2, CallSites: []CallSite{
				{Start: 0xf90 + 0x08, End: 0xf90 + 0x0c, LandingPad: 0xf90 + 0x14, Action: 3},
				{Start: 0xf90 + 0x24, End: 0xf90 + 0x28},
				{Start: 0xf90 + 0x68, End: 0xf90 + 0x6c, LandingPad: 0xf90 + 0x78},
				{Start: 0xf90 + 0x84, End: 0xf90 + 0x88},
			}},
		}},
	}
	dir := testcorpus.Dir(t)
	for _, tt := range tests {
		t.Run(tt.bin, func(t *testing.T) {
			f, tab := openCFI(t, filepath.Join(dir, tt.bin))
			var got []Table
			for _, fde := range tab.FDEs {
				if fde.LSDA == 0 {
					continue
				}
				l, err := Read(f, fde.LSDA, fde.Start)
				if err != nil {
					t.Fatalf("FDE %#x: %v", fde.Start, err)
				}
				got = append(got, *l)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

func openCFI(t *testing.T, path string) (*elf.File, *cfi.Table) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	tab, err := cfi.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	return f, tab
}

// TestCorpusWellFormed: every LSDA of the corpus reads, its call sites
// lie in its FDE in address order without overlapping, and each landing
// pad lies in the FDE too (GCC keeps a landing pad in the partition of
// the calls it serves).
func TestCorpusWellFormed(t *testing.T) {
	dir := testcorpus.Dir(t)
	perArch := map[string]int{}
	for _, e := range testcorpus.Entries(t) {
		if !strings.Contains(e.Path, "except") && !strings.Contains(e.Path, "cold") {
			continue
		}
		f, tab := openCFI(t, filepath.Join(dir, e.Path))
		for _, fde := range tab.FDEs {
			if fde.LSDA == 0 {
				continue
			}
			l, err := Read(f, fde.LSDA, fde.Start)
			if err != nil {
				t.Errorf("%s FDE %#x: %v", e.Path, fde.Start, err)
				continue
			}
			perArch[e.Arch] += len(l.CallSites)
			prev := fde.Start
			for _, c := range l.CallSites {
				if c.Start < prev || c.End > fde.End || c.Start >= c.End {
					t.Errorf("%s FDE [%#x, %#x): call site [%#x, %#x) out of order or outside", e.Path, fde.Start, fde.End, c.Start, c.End)
				}
				if c.LandingPad != 0 && !fde.Contains(c.LandingPad) {
					t.Errorf("%s FDE [%#x, %#x): landing pad %#x outside", e.Path, fde.Start, fde.End, c.LandingPad)
				}
				prev = c.End
			}
			if l.TTypeEnd != 0 && l.TTypeEnd < l.Actions {
				t.Errorf("%s FDE %#x: type table ends at %#x before the action table at %#x", e.Path, fde.Start, l.TTypeEnd, l.Actions)
			}
		}
	}
	if perArch["x86-64"] == 0 || perArch["aarch64"] == 0 {
		t.Errorf("call sites by arch %v: want some on both", perArch)
	}
}

// TestParse covers the encodings GCC emits (uleb128 call sites, udata4
// without .uleb128 support in the assembler), an explicit LPStart and
// the errors.
func TestParse(t *testing.T) {
	const addr, fn = 0x1000, 0x400000
	le := binary.LittleEndian
	tests := []struct {
		name    string
		data    []byte
		want    *Table
		wantErr string
	}{
		{
			name: "uleb128",
			data: []byte{0xff, 0xff, 0x01, 0x09, 0x10, 0x05, 0x90, 0x01, 0x01, 0x20, 0x03, 0x00, 0x00, 0xaa},
			want: &Table{Addr: addr, LPStart: fn, TTypeEnc: EncOmit, CallSiteEnc: EncULEB128, Actions: addr + 13, CallSites: []CallSite{
				{Start: fn + 0x10, End: fn + 0x15, LandingPad: fn + 0x90, Action: 1},
				{Start: fn + 0x20, End: fn + 0x23},
			}},
		},
		{
			name: "udata4 with a type table",
			data: append([]byte{0xff, 0x03, 0x20, 0x03, 26},
				cat(u32(0x10), u32(5), u32(0x40), []byte{0x03}, u32(0x18), u32(8), u32(0), []byte{0x00})...),
			want: &Table{Addr: addr, LPStart: fn, TTypeEnc: EncUdata4, TTypeEnd: addr + 3 + 0x20, CallSiteEnc: EncUdata4, Actions: addr + 5 + 26, CallSites: []CallSite{
				{Start: fn + 0x10, End: fn + 0x15, LandingPad: fn + 0x40, Action: 3},
				{Start: fn + 0x18, End: fn + 0x20},
			}},
		},
		{
			name: "pc-relative LPStart",
			data: cat([]byte{0x1b}, u32(0x100), []byte{0xff, 0x01, 0x04, 0x00, 0x04, 0x08, 0x00}),
			want: &Table{Addr: addr, LPStart: addr + 1 + 0x100, TTypeEnc: EncOmit, CallSiteEnc: EncULEB128, Actions: addr + 12, CallSites: []CallSite{
				{Start: fn, End: fn + 4, LandingPad: addr + 1 + 0x100 + 8},
			}},
		},
		{
			name: "no call sites",
			data: []byte{0xff, 0xff, 0x01, 0x00},
			want: &Table{Addr: addr, LPStart: fn, TTypeEnc: EncOmit, CallSiteEnc: EncULEB128, Actions: addr + 4},
		},
		{name: "empty", data: nil, wantErr: "header: truncated"},
		{name: "table past the end", data: []byte{0xff, 0xff, 0x01, 0x09, 0x10}, wantErr: "9 bytes: truncated"},
		{name: "entry cut short", data: []byte{0xff, 0xff, 0x01, 0x02, 0x10, 0x05, 0x90}, wantErr: "call site 0: truncated"},
		{name: "call sites omitted", data: []byte{0xff, 0xff, 0xff, 0x00}, wantErr: "call-site encoding omitted"},
		{name: "unknown encoding", data: []byte{0xff, 0xff, 0x07, 0x01, 0x00}, wantErr: "unknown pointer encoding 0x7"},
		{name: "indirect LPStart", data: cat([]byte{0x9b}, u32(0), []byte{0xff, 0x01, 0x00}), wantErr: "indirect pointer encoding 0x9b"},
		{name: "data-relative", data: []byte{0xff, 0xff, 0x31, 0x01, 0x00}, wantErr: "unsupported pointer encoding 0x31"},
		{name: "wraps around", data: cat([]byte{0xff, 0xff, 0x04, 25}, u64(0x10), u64(^uint64(0)), u64(0), []byte{0}), wantErr: "wraps around"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.data, addr, fn, 8, le)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				if strings.Contains(tt.wantErr, "truncated") && !errors.Is(err, ErrTruncated) {
					t.Errorf("error %v is not ErrTruncated", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

func u32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
func u64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

func cat(bs ...[]byte) []byte {
	var out []byte
	for _, b := range bs {
		out = append(out, b...)
	}
	return out
}

// FuzzParse: arbitrary bytes never make Parse panic, and a table it
// returns stays within the data.
func FuzzParse(f *testing.F) {
	// Seeds: every LSDA of two corpus binaries, from its start to the end
	// of .gcc_except_table.
	dir := testcorpus.Dir(f)
	for _, bin := range []string{"v1/x86-64/except-O2-dynamic", "v3/aarch64/except-O2-static"} {
		ef, err := elf.Open(filepath.Join(dir, bin))
		if err != nil {
			f.Fatal(err)
		}
		tab, err := cfi.Load(ef)
		if err != nil {
			f.Fatal(err)
		}
		s := ef.Section(".gcc_except_table")
		data, err := s.Data()
		if err != nil {
			f.Fatal(err)
		}
		for _, fde := range tab.FDEs {
			if fde.LSDA >= s.Addr && fde.LSDA < s.Addr+s.Size {
				f.Add(data[fde.LSDA-s.Addr:], fde.LSDA, fde.Start)
			}
		}
		ef.Close()
	}
	f.Fuzz(func(t *testing.T, data []byte, addr, fn uint64) {
		for _, ptr := range []int{4, 8} {
			tab, err := Parse(data, addr, fn, ptr, binary.LittleEndian)
			if err != nil {
				continue
			}
			if n := tab.Actions - addr; n > uint64(len(data)) {
				t.Fatalf("action table at +%d past the %d bytes", n, len(data))
			}
			for _, c := range tab.CallSites {
				if c.End < c.Start {
					t.Fatalf("call site [%#x, %#x)", c.Start, c.End)
				}
			}
		}
	})
}
