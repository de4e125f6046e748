package codeflow

import (
	"encoding/hex"
	"testing"

	"github.com/sframesim/sframesim/arch"
)

func TestDebugSnippet(t *testing.T) {
	code, _ := hex.DecodeString("554889e54883ec10c9c3")
	res := Analyze(arch.AMD64, Func{Start: 0x1000, Code: code})
	for _, in := range res.Insns {
		t.Logf("%#x known=%v %s %s", in.Addr, in.Known, in.Reason, fmtAlt(arch.AMD64, &in))
	}
}
