package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// header is a small header in the generic table's shape: conditional
// calls, a 32/64-bit alias and an #undef.
const header = `#include <asm/bitsperlong.h>
#ifndef __SYSCALL
#define __SYSCALL(x, y)
#endif
#define __NR_zero 0
__SYSCALL(__NR_zero, sys_zero)
#ifdef __ARCH_WANT_ONE /* a comment
   over two lines */
#define __NR_one 1
#endif
#define __NR3264_two 2
#if defined(__ARCH_WANT_TIME32_SYSCALLS) || __BITS_PER_LONG != 32
#define __NR_three 3
#else
#define __NR_three_time32 3
#endif
#if __BITS_PER_LONG == 32
#define __NR_four32 4
#elif !defined(__ARCH_WANT_FOUR)
#define __NR_four_nowant 4
#else
# if 0
#define __NR_never 5
# else
#define __NR_four 4
# endif
#endif
#define __NR_syscalls 9
#undef __NR_syscalls
#if __BITS_PER_LONG == 64 && !defined(__SYSCALL_COMPAT)
#define __NR_two __NR3264_two
#else
#define __NR_two64 __NR3264_two
#endif
#define __NR_gone 6
#undef __NR_gone
`

func TestReadTable(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "unistd.h"), []byte(header), 0o666); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		defs map[string]string
		want []string
	}{
		{map[string]string{"__BITS_PER_LONG": "64"}, []string{"zero", "", "two", "three", "four_nowant"}},
		{map[string]string{"__BITS_PER_LONG": "64", "__ARCH_WANT_ONE": "", "__ARCH_WANT_FOUR": ""}, []string{"zero", "one", "two", "three", "four"}},
		{map[string]string{"__BITS_PER_LONG": "32"}, []string{"zero", "", "two64", "three_time32", "four32"}},
	} {
		got, err := readTable(dir, "unistd.h", c.defs)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%v: %q, want %q", c.defs, got, c.want)
		}
	}
}

func TestReadTableErrors(t *testing.T) {
	for _, text := range []string{
		"#if __BITS_PER_LONG > 32\n#endif\n",       // an operator it does not know
		"#if 1\n",                                  // no #endif
		"#endif\n",                                 // no #if
		"#if 1\n#else\n#else\n#endif\n",            // two #else
		"#define __NR_x (__NR_base + 1)\n",         // not a number or a name
		"#define __NR_x 1\n#define __NR_y 1\n",     // one number, two names
		"#define __NR_x __NR_missing\n",            // an undefined name
		"#define FOO 1\n",                          // no calls
		"#line 3\n#define __NR_x 1\n",              // an unknown directive
		"#if defined(\n#endif\n#define __NR_x 1\n", // a broken condition
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "h"), []byte(text), 0o666); err != nil {
			t.Fatal(err)
		}
		if table, err := readTable(dir, "h", nil); err == nil {
			t.Errorf("%q: %q, want an error", text, table)
		}
	}
}

// TestInstalledHeaders reads the installed linux-libc-dev, if there is
// one: its tables may lack calls the committed ones have (Debian 12's is
// Linux 6.1), but every call they have must be in the committed ones with
// the same number.
func TestInstalledHeaders(t *testing.T) {
	for _, c := range []struct {
		header    string
		defs      map[string]string
		committed string
	}{
		{x86Header, nil, "zsysnum_x86_64.go"},
		{genericHeader, arm64Config, "zsysnum_aarch64.go"},
	} {
		if _, err := os.Stat(c.header); err != nil {
			t.Skipf("no %s: linux-libc-dev is not installed", c.header)
		}
		table, err := readTable("/", c.header, c.defs)
		if err != nil {
			t.Fatal(err)
		}
		committed, err := os.ReadFile(filepath.Join("..", "..", c.committed))
		if err != nil {
			t.Fatal(err)
		}
		names := map[int]string{}
		for _, m := range entryRE.FindAllStringSubmatch(string(committed), -1) {
			nr, _ := strconv.Atoi(m[1])
			names[nr] = m[2]
		}
		for nr, name := range table {
			if name != "" && names[nr] != name {
				t.Errorf("%s: call %d is %q, %s has %q", c.header, nr, name, c.committed, names[nr])
			}
		}
		n := len(names)
		if n < 300 {
			t.Errorf("%s: only %d entries", c.committed, n)
		}
	}
}
