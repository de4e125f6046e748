package symbols

import "testing"

func TestDemangle(t *testing.T) {
	tests := []struct {
		in, want string
		changed  bool // Demangled is not ""
	}{
		{"_ZN3foo3barEv", "foo::bar()", true},
		{"_ZN3foo3barEv+0x4", "foo::bar()+0x4", true},
		{"_ZN3foo3barEv@plt", "foo::bar()@plt", true},
		{"_ZL5checkl.cold+0x1c", "check(long) [clone .cold]+0x1c", true},
		{"_ZTIi", "typeinfo for int", true},
		{"call _ZdlPv", "call operator delete(void*)", true},
		{"jmpq *_ZdlPvm@got.plt", "jmpq *operator delete(void*, unsigned long)@got.plt", true},
		{"mov _ZN3foo1xE+8,%rax", "mov foo::x+8,%rax", true},
		// Not mangled, or not valid: as it is.
		{"main+0x4", "main+0x4", false},
		{"printf@plt", "printf@plt", false},
		{"libc.so.6+0x1234", "libc.so.6+0x1234", false},
		{"0x401000", "0x401000", false},
		{"", "", false},
		{"_Z", "_Z", false},
		{"_Zfoo+0x4", "_Zfoo+0x4", false},
		{"x_ZN3foo3barEv", "x_ZN3foo3barEv", false}, // inside a C name
		{"foo::bar()", "foo::bar()", false},         // already demangled
	}
	for _, tt := range tests {
		if got := Demangle(tt.in); got != tt.want {
			t.Errorf("Demangle(%q) = %q, want %q", tt.in, got, tt.want)
		}
		want := ""
		if tt.changed {
			want = tt.want
		}
		if got := Demangled(tt.in); got != want {
			t.Errorf("Demangled(%q) = %q, want %q", tt.in, got, want)
		}
	}
}

// TestDemangleCorpus demangles the names a C++ corpus binary's symbol
// table gives.
func TestDemangleCorpus(t *testing.T) {
	s := New(open(t, "v3/x86-64/cold-O2-static"), 0)
	tests := []struct {
		pc   uint64
		want string
	}{
		{0x40111a, "check(long) [clone .cold]"},
		{0x401100 + 4, "report(char const*, long)+0x4"},
		{0x401268, "__gnu_cxx::__freeres()"},
	}
	for _, tt := range tests {
		if got := Demangle(s.Format(tt.pc)); got != tt.want {
			t.Errorf("Demangle(Format(%#x) = %q) = %q, want %q", tt.pc, s.Format(tt.pc), got, tt.want)
		}
	}
}
