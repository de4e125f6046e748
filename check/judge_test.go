package check

import (
	"strings"
	"testing"
)

// TestCodeCannotRefuteUnplacedSlot: lua (Debian's lua5.4, built by gcc 16
// for AArch64) allocates luaL_loadfilex's 8 KiB frame with `mov x12,
// #8288; sub sp, sp, x12`, which the code analysis does not follow: the
// CFA is unknown to it, so it cannot say where `stp x29, x30, [sp]` stored
// the return address and must not call SFrame's (and the CFI's) `ra
// *(cfa-8280)` wrong — it reported ra and fp problems there before.
func TestCodeCannotRefuteUnplacedSlot(t *testing.T) {
	rep, err := File("../testdata/realworld/v3/aarch64/lua-dynamic", Options{})
	if err != nil {
		t.Fatalf("%v (the real-world corpus is unpacked by make testdata)", err)
	}
	for _, p := range rep.Problems {
		if strings.HasPrefix(p.Symbol, "luaL_loadfilex") {
			t.Errorf("%s problem at %s (%s): SFrame %s, CFI %s, code %s", p.Kind, p.Symbol, p.Insn, p.SFrame, p.CFI, p.Code)
		}
	}
	if rep.PCs == 0 {
		t.Fatal("no PCs checked")
	}
}
