// Mksysnum writes package linux's system call name tables,
// zsysnum_x86_64.go and zsysnum_aarch64.go, from the Linux uapi headers of
// Debian's linux-libc-dev package:
//
//   - x86-64: /usr/include/x86_64-linux-gnu/asm/unistd_64.h, one
//     "#define __NR_name number" per call;
//   - AArch64: /usr/include/asm-generic/unistd.h, the generic table, read
//     as arm64's uapi asm/unistd.h configured it up to Linux 6.10: 64-bit
//     longs, no __SYSCALL_COMPAT, and __ARCH_WANT_RENAMEAT, NEW_STAT,
//     SET_GET_RLIMIT, TIME32_SYSCALLS, SYS_CLONE3 and MEMFD_SECRET. From
//     Linux 6.11 on the package also has arm64's own
//     /usr/include/aarch64-linux-gnu/asm/unistd_64.h (generated from the
//     kernel's scripts/syscall.tbl); when it is there, the two tables must
//     agree, or mksysnum fails.
//
// The headers are read with a small C preprocessor: #if, #ifdef, #ifndef,
// #elif, #else and #endif with defined(), !, &&, ||, == and != on integers,
// #define and #undef; anything else in a condition, and any __NR_ macro
// that is not a number or another macro's name, is an error, so a change in
// the headers' shape fails here instead of giving a wrong table.
//
// Usage (go generate runs it in linux/):
//
//	go run ./internal/mksysnum [-deb linux-libc-dev_VERSION_all.deb] [-o dir]
//
// Without -deb it reads the installed package (dpkg-query gives its
// version). It refuses to drop a call the committed tables have (headers
// older than theirs) unless given -drop. Debian 12's own linux-libc-dev is
// Linux 6.1, which ends at call 450; the committed tables come from
// bookworm-backports' package (with bookworm-backports in APT's sources;
// go generate passes $LINUX_LIBC_DEV, an absolute path, as -deb):
//
//	apt-get download linux-libc-dev/bookworm-backports
//	LINUX_LIBC_DEV=$PWD/linux-libc-dev_*.deb go generate ./linux
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// The headers, as paths inside the package.
const (
	x86Header     = "/usr/include/x86_64-linux-gnu/asm/unistd_64.h"
	genericHeader = "/usr/include/asm-generic/unistd.h"
	arm64Header   = "/usr/include/aarch64-linux-gnu/asm/unistd_64.h"
)

// arm64Config is what arm64's uapi asm/unistd.h defined before including
// asm-generic/unistd.h (Linux 5.14 to 6.10), and the word size that
// asm/bitsperlong.h gives.
var arm64Config = map[string]string{
	"__BITS_PER_LONG":             "64",
	"__ARCH_WANT_RENAMEAT":        "",
	"__ARCH_WANT_NEW_STAT":        "",
	"__ARCH_WANT_SET_GET_RLIMIT":  "",
	"__ARCH_WANT_TIME32_SYSCALLS": "",
	"__ARCH_WANT_SYS_CLONE3":      "",
	"__ARCH_WANT_MEMFD_SECRET":    "",
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("mksysnum: ")
	deb := flag.String("deb", "", "read the headers from this linux-libc-dev `package` file instead of the installed package")
	out := flag.String("o", ".", "write the tables into `dir`")
	drop := flag.Bool("drop", false, "write tables that lack calls the files in -o name (older headers)")
	flag.Parse()
	if flag.NArg() != 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := generate(*deb, *out, *drop); err != nil {
		log.Fatal(err)
	}
}

func generate(deb, out string, drop bool) error {
	root, version, cleanup, err := headers(deb)
	defer cleanup()
	if err != nil {
		return err
	}
	return run(root, version, out, drop)
}

// headers returns the directory the package's files are under and the
// package's version: the installed package, or deb unpacked into a
// temporary directory that cleanup removes.
func headers(deb string) (root, version string, cleanup func(), err error) {
	cleanup = func() {}
	if deb == "" {
		v, err := exec.Command("dpkg-query", "-W", "-f=${Version}\n", "linux-libc-dev").Output()
		if err != nil {
			return "", "", cleanup, fmt.Errorf("dpkg-query linux-libc-dev: %w (install it with apt-get, or give -deb)", err)
		}
		version, _, _ = strings.Cut(string(v), "\n")
		return "/", version, cleanup, nil
	}
	v, err := exec.Command("dpkg-deb", "-f", deb, "Package", "Version").Output()
	if err != nil {
		return "", "", cleanup, fmt.Errorf("dpkg-deb -f %s: %w", deb, err)
	}
	fields := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(v)), "\n") {
		k, val, _ := strings.Cut(line, ": ")
		fields[k] = val
	}
	if fields["Package"] != "linux-libc-dev" {
		return "", "", cleanup, fmt.Errorf("%s is package %q, not linux-libc-dev", deb, fields["Package"])
	}
	dir, err := os.MkdirTemp("", "mksysnum")
	if err != nil {
		return "", "", cleanup, err
	}
	cleanup = func() { os.RemoveAll(dir) }
	if b, err := exec.Command("dpkg-deb", "-x", deb, dir).CombinedOutput(); err != nil {
		return "", "", cleanup, fmt.Errorf("dpkg-deb -x %s: %w: %s", deb, err, b)
	}
	return dir, fields["Version"], cleanup, nil
}

func run(root, version, out string, drop bool) error {
	x86, err := readTable(root, x86Header, map[string]string{})
	if err != nil {
		return err
	}
	arm64, err := readTable(root, genericHeader, arm64Config)
	if err != nil {
		return err
	}
	arm64Sources := []string{genericHeader + ", as arm64 configures it (see linux/internal/mksysnum)"}
	if _, err := os.Stat(filepath.Join(root, arm64Header)); err == nil {
		own, err := readTable(root, arm64Header, map[string]string{})
		if err != nil {
			return err
		}
		if err := same(arm64, own); err != nil {
			return fmt.Errorf("%s and %s disagree: %w", genericHeader, arm64Header, err)
		}
		arm64Sources = append(arm64Sources, "checked against "+arm64Header)
	}
	for _, f := range []struct {
		file, arch, varName string
		sources             []string
		table               []string
	}{
		{"zsysnum_x86_64.go", "x86-64", "amd64SyscallNames", []string{x86Header}, x86},
		{"zsysnum_aarch64.go", "AArch64", "arm64SyscallNames", arm64Sources, arm64},
	} {
		path := filepath.Join(out, f.file)
		if !drop {
			if err := keeps(path, f.table); err != nil {
				return fmt.Errorf("%w: headers older than %s's? (-drop writes it all the same)", err, path)
			}
		}
		b, err := goFile(f.arch, f.varName, version, f.sources, f.table)
		if err != nil {
			return err
		}
		if err := os.WriteFile(path, b, 0o666); err != nil {
			return err
		}
	}
	return nil
}

// keeps reports an error if the table in file, one mksysnum wrote, names a
// call that table does not (a missing file is fine).
func keeps(file string, table []string) error {
	old, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, m := range entryRE.FindAllStringSubmatch(string(old), -1) {
		nr, _ := strconv.Atoi(m[1])
		if nr >= len(table) || table[nr] != m[2] {
			return fmt.Errorf("%s has call %d %s, the headers do not", file, nr, m[2])
		}
	}
	return nil
}

// entryRE matches one entry of a generated table.
var entryRE = regexp.MustCompile(`(?m)^\t(\d+):\s+"(\w+)",$`)

// same reports how two tables differ, or nil.
func same(a, b []string) error {
	for nr := range max(len(a), len(b)) {
		var x, y string
		if nr < len(a) {
			x = a[nr]
		}
		if nr < len(b) {
			y = b[nr]
		}
		if x != y {
			return fmt.Errorf("call %d is %q in one, %q in the other", nr, x, y)
		}
	}
	return nil
}

func goFile(arch, varName, version string, sources, table []string) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by mksysnum; DO NOT EDIT.\n\n//go:build cgo\n\npackage linux\n\n")
	fmt.Fprintf(&b, "// %s holds the %s system call names by number.\n//\n", varName, arch)
	fmt.Fprintf(&b, "// From Debian's linux-libc-dev %s:\n", version)
	for _, s := range sources {
		fmt.Fprintf(&b, "//   - %s\n", s)
	}
	fmt.Fprintf(&b, "var %s = [...]string{\n", varName)
	for nr, name := range table {
		if name != "" {
			fmt.Fprintf(&b, "\t%d: %q,\n", nr, name)
		}
	}
	fmt.Fprintf(&b, "}\n")
	return format.Source(b.Bytes())
}

// readTable preprocesses header (a path inside root) with the macros
// predefined and returns its system calls, indexed by number: the __NR_
// macros but __NR_syscalls (the table's size) and, in the generic table,
// __NR_arch_specific_syscall (244, where an architecture's own calls would
// start; arm64 has none).
func readTable(root, header string, predefined map[string]string) ([]string, error) {
	text, err := os.ReadFile(filepath.Join(root, header))
	if err != nil {
		return nil, err
	}
	macros, err := preprocess(string(text), predefined)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", header, err)
	}
	var table []string
	for name := range macros {
		call, ok := strings.CutPrefix(name, "__NR_")
		if !ok || call == "syscalls" || call == "arch_specific_syscall" {
			continue
		}
		nr, err := value(macros, name, 0)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", header, err)
		}
		if nr < 0 || nr > 4096 {
			return nil, fmt.Errorf("%s: %s is %d", header, name, nr)
		}
		for len(table) <= int(nr) {
			table = append(table, "")
		}
		if table[nr] != "" {
			return nil, fmt.Errorf("%s: call %d is both %s and %s", header, nr, table[nr], call)
		}
		table[nr] = call
	}
	if len(table) == 0 {
		return nil, fmt.Errorf("%s: no __NR_ macros", header)
	}
	return table, nil
}

// value resolves macro name to a number: a decimal literal or, in turn,
// another macro's name.
func value(macros map[string]string, name string, depth int) (int64, error) {
	body, ok := macros[name]
	if !ok {
		return 0, fmt.Errorf("%s is not defined", name)
	}
	if depth > 8 {
		return 0, fmt.Errorf("%s: macros nest too deeply", name)
	}
	if n, err := strconv.ParseInt(body, 10, 64); err == nil {
		return n, nil
	}
	if identRE.MatchString(body) {
		return value(macros, body, depth+1)
	}
	return 0, fmt.Errorf("%s is %q, neither a number nor a macro name", name, body)
}

var (
	identRE     = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	commentRE   = regexp.MustCompile(`(?s)/\*.*?\*/|//[^\n]*`)
	directiveRE = regexp.MustCompile(`^\s*#\s*([a-z]+)\s*(.*?)\s*$`)
	defineRE    = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)(\([^)]*\))?\s*(.*)$`)
)

// preprocess runs the conditional directives, #define and #undef of text
// and returns the macros defined at the end (object-like ones with their
// bodies; function-like ones with their parameters and body).
func preprocess(text string, predefined map[string]string) (map[string]string, error) {
	macros := map[string]string{}
	for k, v := range predefined {
		macros[k] = v
	}
	text = strings.ReplaceAll(text, "\\\n", " ")
	text = commentRE.ReplaceAllStringFunc(text, func(c string) string {
		return strings.Repeat("\n", strings.Count(c, "\n")) + " "
	})
	// One frame per open #if: whether the lines are being kept, and
	// whether a branch of it has been taken.
	type frame struct{ active, taken, sawElse bool }
	var stack []frame
	active := func() bool { return len(stack) == 0 || stack[len(stack)-1].active }
	outer := func() bool { return len(stack) < 2 || stack[len(stack)-2].active }
	for i, line := range strings.Split(text, "\n") {
		m := directiveRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		dir, arg := m[1], m[2]
		fail := func(err error) error { return fmt.Errorf("line %d: #%s %s: %w", i+1, dir, arg, err) }
		switch dir {
		case "if", "ifdef", "ifndef":
			var ok bool
			if active() {
				var err error
				switch dir {
				case "if":
					ok, err = eval(arg, macros)
				case "ifdef", "ifndef":
					if !identRE.MatchString(arg) {
						err = fmt.Errorf("not a macro name")
					}
					_, ok = macros[arg]
					ok = ok == (dir == "ifdef")
				}
				if err != nil {
					return nil, fail(err)
				}
			}
			stack = append(stack, frame{active: ok, taken: ok})
		case "elif", "else":
			if len(stack) == 0 || stack[len(stack)-1].sawElse {
				return nil, fail(fmt.Errorf("without #if"))
			}
			f := &stack[len(stack)-1]
			ok := outer() && !f.taken
			if ok && dir == "elif" {
				var err error
				if ok, err = eval(arg, macros); err != nil {
					return nil, fail(err)
				}
			}
			f.active, f.taken, f.sawElse = ok, f.taken || ok, dir == "else"
		case "endif":
			if len(stack) == 0 {
				return nil, fail(fmt.Errorf("without #if"))
			}
			stack = stack[:len(stack)-1]
		case "define":
			if active() {
				d := defineRE.FindStringSubmatch(arg)
				if d == nil {
					return nil, fail(fmt.Errorf("no macro name"))
				}
				macros[d[1]] = strings.TrimSpace(d[2] + " " + d[3])
			}
		case "undef":
			if active() {
				delete(macros, arg)
			}
		case "include", "error", "warning", "pragma":
			// Nothing the tables depend on: asm/bitsperlong.h is
			// predefined as __BITS_PER_LONG.
		default:
			return nil, fail(fmt.Errorf("unknown directive"))
		}
	}
	if len(stack) != 0 {
		return nil, fmt.Errorf("%d #if without #endif", len(stack))
	}
	return macros, nil
}

// eval evaluates an #if condition: integers, macro names (a name that is
// not a number-valued macro is 0, as in cpp), defined(NAME) and defined
// NAME, parentheses, !, ==, !=, && and ||.
func eval(expr string, macros map[string]string) (bool, error) {
	toks := tokenRE.FindAllString(expr, -1)
	if strings.Join(toks, "") != strings.Join(strings.Fields(expr), "") {
		return false, fmt.Errorf("unsupported expression")
	}
	p := &exprParser{toks: toks, macros: macros}
	v := p.or()
	if p.err == nil && p.pos != len(p.toks) {
		p.err = fmt.Errorf("unexpected %q", p.toks[p.pos])
	}
	return v != 0, p.err
}

var tokenRE = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*|[0-9]+|&&|\|\||==|!=|[!()]`)

// exprParser is a recursive-descent parser of #if conditions, lowest
// precedence first: or, and, equality, unary, primary.
type exprParser struct {
	toks   []string
	pos    int
	macros map[string]string
	err    error
}

func (p *exprParser) peek() string {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return ""
}

func (p *exprParser) next() string {
	t := p.peek()
	if t == "" && p.err == nil {
		p.err = fmt.Errorf("unexpected end")
	}
	p.pos++
	return t
}

func (p *exprParser) expect(t string) {
	if got := p.next(); got != t && p.err == nil {
		p.err = fmt.Errorf("want %q, have %q", t, got)
	}
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func (p *exprParser) or() int64 {
	v := p.and()
	for p.peek() == "||" {
		p.next()
		w := p.and()
		v = b2i(v != 0 || w != 0)
	}
	return v
}

func (p *exprParser) and() int64 {
	v := p.equality()
	for p.peek() == "&&" {
		p.next()
		w := p.equality()
		v = b2i(v != 0 && w != 0)
	}
	return v
}

func (p *exprParser) equality() int64 {
	v := p.unary()
	for p.peek() == "==" || p.peek() == "!=" {
		op := p.next()
		w := p.unary()
		v = b2i((v == w) == (op == "=="))
	}
	return v
}

func (p *exprParser) unary() int64 {
	if p.peek() == "!" {
		p.next()
		return b2i(p.unary() == 0)
	}
	return p.primary()
}

func (p *exprParser) primary() int64 {
	switch t := p.next(); {
	case t == "(":
		v := p.or()
		p.expect(")")
		return v
	case t == "defined":
		paren := p.peek() == "("
		if paren {
			p.next()
		}
		name := p.next()
		if !identRE.MatchString(name) && p.err == nil {
			p.err = fmt.Errorf("defined(%q)", name)
		}
		if paren {
			p.expect(")")
		}
		_, ok := p.macros[name]
		return b2i(ok)
	case identRE.MatchString(t):
		n, err := value(p.macros, t, 0)
		if err != nil {
			return 0
		}
		return n
	default:
		n, err := strconv.ParseInt(t, 10, 64)
		if err != nil && p.err == nil {
			p.err = fmt.Errorf("unexpected %q", t)
		}
		return n
	}
}
