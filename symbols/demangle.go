package symbols

import (
	"strings"

	"github.com/ianlancetaylor/demangle"
)

// Demangle returns text with each mangled C++ name in it demangled, as
// c++filt filters a line: "_ZN3foo3barEv+0x4" → "foo::bar()+0x4",
// "_ZN3foo3barEv@plt" → "foo::bar()@plt", "call _ZdlPv" → "call operator
// delete(void*)". A name is a word of letters, digits, '_', '.' and '$'
// starting with "_Z" (a GCC partition suffix such as ".cold" is part of
// it: "foo() [clone .cold]"); one the demangler rejects stays as it is,
// and so does everything else. Reports keep the mangled names in their
// JSON and print them through Demangle.
func Demangle(text string) string {
	if !strings.Contains(text, "_Z") {
		return text
	}
	var b strings.Builder
	for i := 0; i < len(text); {
		if !strings.HasPrefix(text[i:], "_Z") || i > 0 && isNameByte(text[i-1]) {
			b.WriteByte(text[i])
			i++
			continue
		}
		j := i
		for j < len(text) && isNameByte(text[j]) {
			j++
		}
		if d, err := demangle.ToString(text[i:j]); err == nil {
			b.WriteString(d)
		} else {
			b.WriteString(text[i:j])
		}
		i = j
	}
	return b.String()
}

// isNameByte reports whether c can be part of a mangled name.
func isNameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '$'
}

// Demangled returns Demangle(text) when that differs from text, else "":
// the value of a JSON field beside a mangled name, left out (omitempty)
// for names that are not mangled.
func Demangled(text string) string {
	if d := Demangle(text); d != text {
		return d
	}
	return ""
}
