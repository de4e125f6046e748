//go:build cgo

package linux

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/sframesim/sframesim/internal/hostfile"
)

// The guest's view of the host file system: what a path the guest opens,
// stats, accesses or reads as a link can reach. It shows only what the
// user named:
//
//   - the files of Config.ReadAllow and the program itself, at their host
//     paths (compared after filepath.Abs; /proc/self/exe is the program);
//     a directory of Config.ReadAllow with everything below it (a named
//     tree), resolved component by component: a symbolic link in it is
//     followed as the guest's path it names, so one that leads out of the
//     named trees shows only what the view shows there (nothing, but for
//     a sysroot's files or another named path), never the host's file;
//   - for a dynamically linked program, its sysroot. A dedicated sysroot
//     directory (.deps/sysroots/sid-amd64, /usr/aarch64-linux-gnu) is shown
//     whole, as in a chroot. The host's own root, "/" (the x86-64 default),
//     is not: only what ld.so reads is, namely the program interpreter
//     (PT_INTERP), the library directories it searches (/lib, /lib64,
//     /usr/lib, /usr/lib64 with their multiarch subdirectories, and the
//     directories /etc/ld.so.conf and the files it includes name) and
//     /etc/ld.so.cache, each with everything below it.
//
// Everything else does not exist (ENOENT), as for a sandboxed process whose
// mount namespace lacks it; the directories on the way to a shown path
// exist, but nothing else in them. Paths are resolved inside the sysroot
// component by component, symbolic links included (an absolute target
// starts again at the sysroot, ".." stops at its root), and each resolved
// component is checked: a link in a shown directory that points elsewhere
// (/usr/lib/environment.d/99-environment.conf -> /etc/environment) leads
// to ENOENT.
//
// The host's /proc and /sys are never shown: they would describe
// sframesim, not the guest (/proc/self/environ is sframesim's
// environment). /proc/self/exe (readlink, for $ORIGIN and static PIEs;
// open) is the program; procfs.go makes the rest the guest gets of them. Of what is shown, only
// regular files are opened, and directories opened and listed
// (getdents64, in sorted order: the view's directories are mode 0555,
// size 4096, 2 links and one per subdirectory shown); a device, FIFO or
// socket is refused with EACCES (see openShared).
//
// The view is read-only; the guest's writable files are an overlay over
// it (overlay.go), which is looked up first.

// fsView is the view of one process.
type fsView struct {
	root  string          // the sysroot (an absolute host directory), "" for none
	shown []string        // guest paths (clean, absolute) shown with all below them: ["/"] for a dedicated sysroot
	part  bool            // the sysroot is the host's "/": only part of it is shown
	allow map[string]bool // host files named by the user, by absolute path
	trees []string        // those of them that are directories, longest first
	exe   string          // the program's absolute path
}

// newFSView makes the view for a process: allow are the Config.ReadAllow
// paths, exe the program, root the sysroot ("" for none).
func newFSView(root string, allow []string, exe string) (fsView, error) {
	v := fsView{root: root, allow: map[string]bool{}}
	for _, a := range append(slices.Clip(allow), exe) {
		abs, err := filepath.Abs(a)
		if err != nil {
			return v, fmt.Errorf("allow-read %s: %w", a, err)
		}
		v.allow[abs] = true
		// A directory that is sframesim's /proc (/dev/fd) shows nothing.
		if fi, err := os.Stat(abs); err == nil && fi.IsDir() && !slices.Contains(v.trees, abs) {
			if real, err := filepath.EvalSymlinks(abs); err == nil && !kernelFS(real) {
				v.trees = append(v.trees, abs)
			}
		}
	}
	// The longest first: a tree named inside another is looked up in
	// itself (the same files either way).
	slices.SortFunc(v.trees, func(a, b string) int { return cmp.Or(len(b)-len(a), strings.Compare(a, b)) })
	v.exe, _ = filepath.Abs(exe)
	if root == "" {
		return v, nil
	}
	if real, err := filepath.EvalSymlinks(root); err != nil || real != "/" {
		v.shown = []string{"/"} // a directory the user chose: all of it
		return v, nil
	}
	v.part = true
	v.showLoaderPaths()
	return v, nil
}

// showLoaderPaths shows what ld.so reads, but for the interpreter itself
// (loadInterp shows it): the library directories it searches and
// /etc/ld.so.cache.
func (v *fsView) showLoaderPaths() {
	for _, d := range append([]string{"/lib", "/lib64", "/usr/lib", "/usr/lib64", "/etc/ld.so.cache"}, ldSoConfDirs(v.root)...) {
		v.show(d)
	}
}

// show adds the guest path g to what is shown, both as named and as it
// resolves in the sysroot (so that its symbolic links can be followed).
func (v *fsView) show(g string) {
	if !v.part {
		return // no sysroot, or all of it
	}
	g = filepath.Clean(g)
	add := func(g string) {
		if !slices.Contains(v.shown, g) {
			v.shown = append(v.shown, g)
		}
	}
	add(g)
	if host, _, e := sysrootPath(v.root, g, true, nil); e == 0 {
		if rel, err := filepath.Rel(v.root, host); err == nil && !strings.HasPrefix(rel, "..") {
			add(filepath.Clean("/" + rel))
		}
	}
}

// visibility is how much of a resolved guest path the view shows.
type visibility int

const (
	hidden   visibility = iota // does not exist for the guest
	onTheWay                   // a directory above a shown path
	visible                    // shown, or below a shown path
)

// see says how much of the resolved guest path g is shown.
func (v *fsView) see(g string) visibility {
	if kernelFS(g) {
		return hidden
	}
	best := hidden
	for _, r := range v.shown {
		switch {
		case r == "/" || g == r || strings.HasPrefix(g, r+"/"):
			return visible
		case g == "/" || strings.HasPrefix(r, g+"/"):
			best = onTheWay
		}
	}
	return best
}

// kernelFS reports whether the absolute path g is in /proc or /sys, which
// describe the host and sframesim, and are never shown.
func kernelFS(g string) bool {
	return g == "/proc" || strings.HasPrefix(g, "/proc/") || g == "/sys" || strings.HasPrefix(g, "/sys/")
}

// viewFile is a host file the view shows.
type viewFile struct {
	host   string
	path   string      // the guest path host is at: the path looked up, its links followed (a named file's, as named)
	fi     fs.FileInfo // Lstat of host (Stat for a named file followed)
	follow bool        // a file the user named: opened following symbolic links
	// link is the symbolic link of a named tree a lookup that stops at
	// links (lookupStop) met, with errno eRedirect: the caller follows it.
	link *viewLink
}

// viewLink is a symbolic link met looking up a path in a named tree: its
// directory (the guest path), its target as written, and the components
// of the path after it.
type viewLink struct {
	dir, target string
	rest        []string
}

// eRedirect is no errno: the lookup met a link for its caller to follow
// (viewFile.link).
const eRedirect = -1

// lookup finds the host file the absolute, clean guest path abs names
// (followLast: a symbolic link in its last component is followed), or
// returns an errno.
func (v *fsView) lookup(abs string, followLast bool) (viewFile, int) {
	links := 0
	return v.lookupLinks(abs, followLast, &links)
}

// lookupLinks is lookup, counting the symbolic links followed in named
// trees in *links.
func (v *fsView) lookupLinks(abs string, followLast bool, links *int) (viewFile, int) {
	return v.lookupStop(abs, followLast, links, false)
}

// lookupStop is lookupLinks, but if stop, a symbolic link of a named tree
// to follow is not followed: it is returned (viewFile.link, eRedirect),
// counted in *links, for the overlay to follow through its own files,
// which may have changed, replaced or removed the target (writable trees).
func (v *fsView) lookupStop(abs string, followLast bool, links *int, stop bool) (viewFile, int) {
	if abs == "/proc/self/exe" || abs == fmt.Sprintf("/proc/%d/exe", guestPID) {
		abs = v.exe
	}
	if kernelFS(abs) {
		return viewFile{}, eNOENT
	}
	if root := v.treeOf(abs); root != "" && !v.allow[abs] {
		// In a named tree; a path named itself (the tree's root, a file
		// named too) is followed as a named file is, below.
		return v.treeLookup(root, abs, followLast, links, stop)
	}
	if v.allow[abs] {
		stat := os.Lstat
		if followLast {
			stat = os.Stat
			if real, err := filepath.EvalSymlinks(abs); err == nil && kernelFS(real) {
				return viewFile{}, eNOENT // named, but sframesim's /proc, not the guest's
			}
		}
		fi, err := stat(abs)
		if err != nil {
			return viewFile{}, hostErrno(err)
		}
		return viewFile{host: abs, path: abs, fi: fi, follow: followLast}, 0
	}
	if v.root == "" {
		return viewFile{}, eNOENT
	}
	host, fi, e := sysrootPath(v.root, abs, followLast, v.see)
	if e != 0 {
		return viewFile{}, e
	}
	// host is below the sysroot: its guest path is what follows root.
	g := strings.TrimPrefix(host, strings.TrimSuffix(v.root, "/"))
	if g == "" {
		g = "/"
	}
	return viewFile{host: host, path: g, fi: fi}, 0
}

// treeOf returns the named tree (fsView.trees) the clean, absolute guest
// path abs is in, or "".
func (v *fsView) treeOf(abs string) string {
	for _, t := range v.trees {
		if abs == t || t == "/" || strings.HasPrefix(abs, t+"/") {
			return t
		}
	}
	return ""
}

// treeLookup finds abs, a path below the named tree root, whose host path
// is abs itself: component by component from root, each with Lstat. A
// symbolic link (but one in the last component without followLast) is
// followed as the guest path it names (a relative target from the link's
// directory, its ".." as Linux takes it: walkDots), looked up in the whole
// view again: inside a named tree, a file of it; outside, what the view
// shows there, so that a link out of the tree never reaches a host file
// the user did not name.
func (v *fsView) treeLookup(root, abs string, followLast bool, links *int, stop bool) (viewFile, int) {
	rest := strings.Split(strings.TrimPrefix(abs[len(root):], "/"), "/")
	cur := root
	for i, c := range rest {
		next := filepath.Join(cur, c)
		fi, err := os.Lstat(next)
		if err != nil {
			if errors.Is(err, syscall.ENOTDIR) {
				return viewFile{}, eNOTDIR
			}
			if errors.Is(err, fs.ErrNotExist) {
				return viewFile{}, eNOENT
			}
			return viewFile{}, eACCES
		}
		last := i == len(rest)-1
		if fi.Mode()&fs.ModeSymlink != 0 && (followLast || !last) {
			if *links++; *links > maxSymlinks {
				return viewFile{}, eLOOP
			}
			target, err := os.Readlink(next)
			if err != nil || target == "" {
				return viewFile{}, eNOENT
			}
			if stop {
				return viewFile{link: &viewLink{dir: cur, target: target, rest: rest[i+1:]}}, eRedirect
			}
			target, e := v.walkDots(cur, target, links) // looks nothing up without ".."
			if e != 0 {
				return viewFile{}, e
			}
			return v.lookupLinks(filepath.Join(append([]string{target}, rest[i+1:]...)...), followLast, links)
		}
		if !last && !fi.IsDir() {
			return viewFile{}, eNOTDIR
		}
		if last {
			return viewFile{host: next, path: next, fi: fi}, 0
		}
		cur = next
	}
	return viewFile{}, eNOENT // not reached: abs is below root
}

// walkDots is walkDots for a link's target in a named tree (cur: the
// link's directory), the prefix before each ".." looked up in the view
// (a directory above a named file is one too).
func (v *fsView) walkDots(cur, target string, links *int) (string, int) {
	return walkDots(cur, target, func(g string) (string, int) {
		vf, e := v.lookupLinks(g, true, links)
		switch {
		case e == eNOENT && v.aboveAllowed(g):
			return g, 0
		case e != 0:
			return "", e
		case !vf.fi.IsDir():
			return "", eNOTDIR
		}
		return vf.path, 0
	})
}

// hostErrno is the errno the guest gets for an error of a host file
// operation.
func hostErrno(err error) int {
	var nr *hostfile.NotRegularError
	switch {
	case errors.As(err, &nr) && nr.Mode.IsDir():
		return eISDIR
	case errors.As(err, &nr):
		return eACCES
	case errors.Is(err, fs.ErrNotExist):
		return eNOENT
	case errors.Is(err, fs.ErrPermission):
		return eACCES
	case errors.Is(err, syscall.ENOTDIR):
		return eNOTDIR
	case errors.Is(err, syscall.ELOOP):
		return eLOOP
	case errors.Is(err, syscall.EISDIR):
		return eISDIR
	}
	return eIO
}

// statMode is the st_mode the guest sees for a host file: its type, and
// read-only permissions (no host file is ever written: the guest's writes
// go to its overlay, overlay.go); a regular file keeps the host's execute
// bits, so a program finds its tools executable (access X_OK) as natively.
func statMode(fi fs.FileInfo) uint32 {
	m := fi.Mode()
	switch {
	case m.IsDir():
		return 0o040555
	case m&fs.ModeSymlink != 0:
		return 0o120777
	case m&fs.ModeNamedPipe != 0:
		return 0o010444
	case m&fs.ModeSocket != 0:
		return 0o140444
	case m&fs.ModeCharDevice != 0:
		return 0o020444
	case m&fs.ModeDevice != 0:
		return 0o060444
	}
	return 0o100444 | uint32(m.Perm()&0o111)
}

// maxConfSize bounds what is read of one ld.so.conf file.
const maxConfSize = 1 << 20

// ldSoConfDirs returns the library directories /etc/ld.so.conf names in
// the sysroot root, following its include lines (glob patterns, relative
// ones to the including file's directory) as ldconfig does.
func ldSoConfDirs(root string) []string {
	var dirs []string
	seen := map[string]bool{}
	var parse func(file string, depth int)
	parse = func(file string, depth int) {
		if depth > 8 || seen[file] {
			return
		}
		seen[file] = true
		host, _, e := sysrootPath(root, file, true, nil)
		if e != 0 {
			return
		}
		f, err := hostfile.Open(host)
		if err != nil {
			return
		}
		data, _ := io.ReadAll(io.LimitReader(f, maxConfSize))
		f.Close()
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			line, _, _ := strings.Cut(sc.Text(), "#")
			fields := strings.Fields(line)
			switch {
			case len(fields) == 0 || fields[0] == "hwcap":
			case fields[0] == "include":
				for _, pat := range fields[1:] {
					if !filepath.IsAbs(pat) {
						pat = filepath.Join(filepath.Dir(file), pat)
					}
					matches, _ := filepath.Glob(filepath.Join(root, pat))
					slices.Sort(matches)
					for _, m := range matches {
						if rel, err := filepath.Rel(root, m); err == nil && !strings.HasPrefix(rel, "..") {
							parse(filepath.Clean("/"+rel), depth+1)
						}
					}
				}
			default:
				for _, d := range strings.FieldsFunc(line, func(r rune) bool { return r == ':' || r == ',' || r == ' ' || r == '\t' }) {
					d, _, _ = strings.Cut(d, "=") // an old "DIR=TYPE"
					if filepath.IsAbs(d) {
						dirs = append(dirs, filepath.Clean(d))
					}
				}
			}
		}
	}
	parse("/etc/ld.so.conf", 0)
	return dirs
}

// maxSymlinks is how many symbolic links one path lookup follows
// (Linux's MAXSYMLINKS) before ELOOP.
const maxSymlinks = 40

const eLOOP = 40

// sysrootPath resolves the absolute guest path guest inside the host
// directory root as if root were the file system's root: ".." stops at
// root, and symbolic links are followed (an absolute target starts again
// at root; followLast says whether a link in the last component is too).
// Each component, once resolved, must be shown by see (nil: everything
// is): a hidden one is ENOENT, and one on the way to a shown path only
// counts as a directory. It returns the host path and its Lstat, or an
// errno (ENOENT, ENOTDIR, ELOOP).
func sysrootPath(root, guest string, followLast bool, see func(string) visibility) (string, fs.FileInfo, int) {
	if !strings.HasPrefix(guest, "/") {
		return "", nil, eNOENT
	}
	if see == nil {
		see = func(string) visibility { return visible }
	}
	todo := strings.Split(guest, "/")
	var done []string // resolved components below root
	links := 0
	if see("/") == hidden {
		return "", nil, eNOENT
	}
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(done) > 0 {
				done = done[:len(done)-1]
			}
			continue
		}
		vis := see("/" + filepath.Join(append(done, c)...))
		if vis == hidden {
			return "", nil, eNOENT
		}
		host := filepath.Join(root, filepath.Join(done...), c)
		fi, err := os.Lstat(host)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return "", nil, eNOENT
			}
			if errors.Is(err, syscall.ENOTDIR) {
				return "", nil, eNOTDIR
			}
			return "", nil, eACCES
		}
		isLink := fi.Mode()&fs.ModeSymlink != 0
		if vis == onTheWay && !fi.IsDir() && !isLink {
			return "", nil, eNOENT // only directories lead to what is shown
		}
		last := len(todo) == 0 || strings.Trim(strings.Join(todo, "/"), "/.") == ""
		if isLink && (followLast || !last) {
			if links++; links > maxSymlinks {
				return "", nil, eLOOP
			}
			target, err := os.Readlink(host)
			if err != nil {
				return "", nil, eNOENT
			}
			if strings.HasPrefix(target, "/") {
				done = done[:0]
			}
			todo = append(strings.Split(target, "/"), todo...)
			continue
		}
		if !last && !fi.IsDir() {
			return "", nil, eNOTDIR
		}
		done = append(done, c)
	}
	host := filepath.Join(root, filepath.Join(done...))
	fi, err := os.Lstat(host)
	if err != nil {
		return "", nil, eNOENT
	}
	return host, fi, 0
}
