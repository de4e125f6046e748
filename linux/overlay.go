//go:build cgo

package linux

import (
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sframesim/sframesim/internal/hostfile"
)

// The guest's private writable file system: an in-memory overlay over its
// read-only view of the host (fsview.go). Nothing the guest does is ever
// written on the host.
//
// Where the guest may write: below the writable roots, /tmp and the
// working directory (getcwd: the host's), which always exist as
// directories, whether the view shows them or not. There the guest may
// create, write, truncate, rename, remove and chmod files, make and
// remove directories and symbolic links; what the view shows there
// (a Config.ReadAllow file, a sysroot's /tmp) is copied into the overlay
// the first time it is modified (copy-up, as overlayfs does), and removed
// from the guest's sight by a whiteout when it is removed. Elsewhere
// everything stays read-only: creating or modifying is EROFS, as before.
//
// The overlay maps guest paths (absolute, clean, links in the overlay
// resolved) to nodes: a regular file (its contents), a directory, a
// symbolic link, or nil for a whiteout. A directory the guest made hides
// whatever the view has below its path (opaque); the writable roots, the
// directories above them and the host directories the guest created
// something in are merged: what the overlay does not hold below them is
// looked up in the view. Looking a path up walks it component by
// component through the overlay, following the overlay's symbolic links,
// and hands what remains, from the first component the overlay does not
// hold, to the view. A symbolic link the view meets in a named tree is
// handed back (lookupStop) and its target looked up from the overlay
// again, as the overlay's own links are, so that what the guest wrote,
// made or removed at the target is what the link reaches, and a write
// through it copies up the target. A ".." is taken before, as Linux takes it (walkDots): the
// paths looked up are clean, each ".." replaced by the parent of the
// directory the components before it name, their links followed.
//
// Deterministic: inode numbers are handed out in the order nodes are made
// (a copied-up file keeps the inode number the guest saw), and times come
// from the fake clock: the view's files show its start (epochTimes), the
// guest's files and directories the time of the call that made, wrote,
// read or changed them (touch), as ext4's on Linux.
// The permission bits are recorded (chmod, the creation mode less the
// umask: 022 until the guest sets another), shown and enforced on the
// overlay's files and directories (allows) as Linux enforces them on
// their owner without capabilities, which the guest is; the view's files
// show 0444 (0555 for directories) and the host's execute bits.
//
// Memory: the contents of the overlay's files, their paths and link
// targets and a fixed 256 bytes per node count against Config.MaxMem
// (addrSpace.held); a write, truncate or creation that would exceed it
// fails with ENOSPC (a write writes what still fits). A file's contents
// are held in chunks (filedata.go), so the host memory they take stays
// close to what they count, however they grew. A node's bytes are
// released when it has no name and no descriptor refers to it (a file
// unlinked while open stays readable and writable through it).
//
// Hard links are names of one node (a file of the view is copied up
// first). Limits: renaming a directory the view shows (or one merged with
// it) is EXDEV, as on overlayfs without redirect_dir. O_TMPFILE makes a
// file without a name in a directory of the overlay, which linkat of
// /proc/self/fd/N can name (linkedFD). A shared mapping of a file
// open for reading and writing is kept coherent with the file at every
// system call (shared.go); a shared writable mapping of a file open only
// for reading is refused (EACCES), as on Linux, and a private mapping, or
// a shared one of a read-only descriptor, is a copy of the contents at
// mmap time; madvise(MADV_DONTNEED) on a private mapping of an overlay
// file gives zeros; a
// descriptor opened for reading before a copy-up keeps reading the host
// file (as overlayfs did before Linux 4.19).

// nodeKind is the type of an overlay node.
type nodeKind int

const (
	nodeFile nodeKind = iota
	nodeDir
	nodeLink
	nodeFifo // a named pipe (mknod, mkfifo)
	nodeSock // a socket's name (mknod)
)

// oNode is a file, directory or symbolic link of the overlay.
type oNode struct {
	kind   nodeKind
	mode   uint32 // permission bits
	ino    uint64
	data   fileData // a file's contents
	target string   // a link's target
	opaque bool     // a directory the guest made: the view below it is hidden
	nlink  int      // names (0 once removed)
	// linkable: a file made without a name by O_TMPFILE (without
	// O_EXCL), which linkat may name once; another file without names
	// cannot get one back (ENOENT).
	linkable bool
	cost     uint64 // what it counts against the memory cap
	// shared: data is shared with a checkpoint, copied before a write.
	shared bool
	// times are the access, modification and status change times
	// (atime, mtime, ctime), from the fake wall clock (touch); the
	// view's files and the directories made to mirror them keep the
	// clock's start (epochTimes).
	times [3]timespec
}

// allows reports whether node n's owner permission bits grant all of
// want (4 read, 2 write, 1 search or execute, as access's R_OK, W_OK and
// X_OK): the guest owns the overlay's files and has no capability that
// overrides them, so Linux checks exactly these bits. A file of the view
// (n nil) is checked by the view's own rules instead: read-only, its
// directories searchable.
func allows(n *oNode, want uint32) bool {
	return n == nil || n.mode>>6&want == want
}

// epochTimes are the times of the view's files: the fake clock's start.
var epochTimes = [3]timespec{{sec: epoch}, {sec: epoch}, {sec: epoch}}

// overlay is the writable file system of one process.
type overlay struct {
	nodes map[string]*oNode // by guest path; nil: a whiteout (setNode, delNode)
	// subdirs counts, by directory path, the overlay's directories
	// directly in it, for its link count (dirNlink).
	subdirs map[string]int
	roots   []string // the writable roots
	nextIno uint64
	held    uint64 // counted in addrSpace.held
	umask   uint32 // the file mode creation mask (umask), shared by the threads
	// cwd is the working directory's node when it is one of the
	// overlay's (nil: the view's), which "." names even once removed.
	cwd *oNode
}

// nodeOverhead is what a node counts against the memory cap besides its
// contents, path and target.
const nodeOverhead = 256

// defaultUmask is the file mode creation mask a process starts with.
const defaultUmask = 0o022

// firstOverlayIno is the first inode number of a node the guest makes
// (host files are numbered from 100 in the order they are met).
const firstOverlayIno = 1 << 20

// newOverlay makes the overlay of a process whose working directory is
// cwd: the writable roots and the directories above them are merged
// directories.
func newOverlay(cwd string) *overlay {
	o := &overlay{nodes: map[string]*oNode{}, subdirs: map[string]int{}, roots: []string{"/tmp"}, nextIno: firstOverlayIno, umask: defaultUmask}
	if cwd != "" && cwd != "/tmp" {
		o.roots = append(o.roots, cwd)
	}
	for _, r := range o.roots {
		for d := r; d != "/"; d = filepath.Dir(d) {
			if o.nodes[d] == nil {
				n := o.newNode(nodeDir, 0o755)
				n.nlink = 2
				o.setNode(d, n)
			}
		}
	}
	return o
}

// setNode gives path node n (nil: a whiteout), keeping subdirs.
func (o *overlay) setNode(path string, n *oNode) {
	o.dropSubdir(path)
	o.nodes[path] = n
	if n != nil && n.kind == nodeDir && path != "/" {
		o.subdirs[filepath.Dir(path)]++
	}
}

// delNode removes path from the overlay, keeping subdirs.
func (o *overlay) delNode(path string) {
	o.dropSubdir(path)
	delete(o.nodes, path)
}

// dropSubdir uncounts the directory at path, if the overlay has one.
func (o *overlay) dropSubdir(path string) {
	if old := o.nodes[path]; old != nil && old.kind == nodeDir && path != "/" {
		parent := filepath.Dir(path)
		if o.subdirs[parent]--; o.subdirs[parent] <= 0 {
			delete(o.subdirs, parent)
		}
	}
}

// dirNlink is the link count of the overlay's directory n at path, as a
// directory's is on Linux: 2 and one per subdirectory (its entry's ".."),
// the overlay's and, for a merged directory, the view's it does not
// replace or hide; 0 once removed.
func (p *Process) dirNlink(path string, n *oNode) uint64 {
	if n.nlink == 0 {
		return 0
	}
	k := uint64(2 + p.ov.subdirs[path])
	if n.opaque {
		return k
	}
	ve, e := p.viewEntry(path, true)
	if e != 0 || ve.vf.fi == nil || !ve.vf.fi.IsDir() {
		return k
	}
	ents, _ := os.ReadDir(ve.vf.host)
	for _, d := range ents {
		g := filepath.Join(path, d.Name())
		if _, in := p.ov.nodes[g]; in || !d.IsDir() {
			continue
		}
		if vf, errno := p.view.lookup(g, false); errno == 0 && vf.fi.IsDir() {
			k++
		}
	}
	return k
}

// newNode makes a node with the times of the view's files: a directory
// that mirrors one of the view (Process.newNode makes a new file).
func (o *overlay) newNode(kind nodeKind, mode uint32) *oNode {
	o.nextIno++
	return &oNode{kind: kind, mode: mode & 0o7777, ino: o.nextIno - 1, nlink: 1, times: epochTimes}
}

// newNode makes the node of a file, directory or link the guest creates:
// all its times are now.
func (p *Process) newNode(kind nodeKind, mode uint32) *oNode {
	n := p.ov.newNode(kind, mode)
	now := p.stamp()
	n.times = [3]timespec{now, now, now}
	return n
}

// Which of a node's times touch sets.
const (
	touchAccess = 1 << iota // atime
	touchModify             // mtime
	touchChange             // ctime
)

// stamp is the fake wall clock's time now, for a file's times.
func (p *Process) stamp() timespec {
	t, _ := p.now(0)
	return timespec{t / 1e9, t % 1e9}
}

// touch sets the times of node n that which names to now, as Linux does
// when a file is written (touchModify|touchChange), its inode changed
// (touchChange: chmod, chown, link, unlink, rename) or its contents
// read (touchAccess, through accessed). Files are compared by their
// times (make, rsync, tar), so these move on the fake clock as on
// Linux's, deterministically.
func (p *Process) touch(n *oNode, which int) {
	if n == nil {
		return
	}
	now := p.stamp()
	for i := range n.times {
		if which&(1<<i) != 0 {
			n.times[i] = now
		}
	}
}

// accessed sets node n's atime as Linux's default relatime does on a
// read: only when it is not after the last modification or change, or
// is a day old.
func (p *Process) accessed(n *oNode) {
	if n == nil {
		return
	}
	a, now := n.times[0], p.stamp()
	if !after(a, n.times[1]) || !after(a, n.times[2]) || now.sec-a.sec >= 24*60*60 {
		n.times[0] = now
	}
}

// dropSetID clears a file's set-user-ID bit, and its set-group-ID bit if
// the group may execute it, as Linux does when a process without
// CAP_FSETID writes, truncates or chowns it (file_remove_privs,
// setattr_should_drop_suidgid).
func dropSetID(n *oNode) {
	if n != nil && n.kind == nodeFile && n.mode&0o6000 != 0 {
		n.mode &^= 0o4000
		if n.mode&0o010 != 0 {
			n.mode &^= 0o2000
		}
	}
}

// after reports whether time a is after b.
func after(a, b timespec) bool { return a.sec > b.sec || a.sec == b.sec && a.nsec > b.nsec }

// putNew gives node n, which the guest just made, the name path (put)
// and moves the times of the directory that holds it.
func (p *Process) putNew(path string, n *oNode) int {
	if e := p.put(path, n); e != 0 {
		return e
	}
	p.entriesChanged(path)
	return 0
}

// entriesChanged sets the modification and change times of the directory
// holding path, whose entries changed (a name made, removed or moved):
// the overlay's node, which put, materialize or the name's own existence
// in the overlay made.
func (p *Process) entriesChanged(path string) {
	p.touch(p.ov.nodes[filepath.Dir(path)], touchModify|touchChange)
}

// writable reports whether the guest path g is in a writable tree.
func (o *overlay) writable(g string) bool {
	for _, r := range o.roots {
		if g == r || r == "/" || strings.HasPrefix(g, r+"/") {
			return true
		}
	}
	return false
}

// isRootOrAbove reports whether g is a writable root or a directory above
// one: it cannot be removed or renamed.
func (o *overlay) isRootOrAbove(g string) bool {
	for _, r := range o.roots {
		if g == r || g == "/" || strings.HasPrefix(r, g+"/") {
			return true
		}
	}
	return false
}

// ovEntry is what a guest path names: an overlay node, a file of the view
// or a directory on the way to a file the user named.
type ovEntry struct {
	path string   // the guest path, the overlay's links resolved
	node *oNode   // the overlay's node, or nil
	vf   viewFile // else the view's file (vf.fi != nil)
}

// isDir reports whether e is a directory.
func (e ovEntry) isDir() bool {
	if e.node != nil {
		return e.node.kind == nodeDir
	}
	return e.vf.fi == nil || e.vf.fi.IsDir()
}

// merged reports whether e is a directory whose contents come (in part)
// from the view.
func (e ovEntry) merged() bool { return e.isDir() && (e.node == nil || !e.node.opaque) }

// real returns the path e names with all its links resolved: path, but
// for a file of the view, whose own symbolic links the view followed
// (path is the name the guest gave it, the overlay's links resolved).
// A directory's ".." is the directory above it.
func (e ovEntry) real() string {
	if e.node == nil && e.vf.fi != nil {
		return e.vf.path
	}
	return e.path
}

// lookup finds what the absolute, clean guest path abs names (follow: a
// symbolic link in its last component is followed), or returns an errno.
func (p *Process) lookup(abs string, follow bool) (ovEntry, int) {
	links := 0
	return p.lookupLinks(abs, follow, &links)
}

// lookupLinks is lookup, counting the symbolic links followed in *links:
// one path's walk follows at most maxSymlinks, those followed to find the
// directories before the ".." components of the path and of its links'
// targets included (walkDots).
func (p *Process) lookupLinks(abs string, follow bool, links *int) (ovEntry, int) {
	if strings.HasPrefix(abs, deadPrefix) {
		return p.deadEntry(abs)
	}
	if fd, rest, ok := fdPathBelow(abs); ok && (follow || rest != "") {
		// A descriptor's path (/proc/self/fd/N, /dev/fd/N, /dev/stdin) is
		// a link of /proc that leads to the open file itself, as the
		// path-walk follows it: what glibc's fchmodat(AT_SYMLINK_NOFOLLOW)
		// chmods, and what the *at calls reach through.
		if ent, e, found := p.fdEntry(fd, rest, follow, links); found {
			return ent, e
		}
	}
	o := p.ov
restart:
	rest := strings.Split(abs, "/")
	// The components after the last that names something are "" or ".":
	// past it, len(rest) <= tail.
	tail := 0
	for tail < len(rest) && (rest[len(rest)-1-tail] == "" || rest[len(rest)-1-tail] == ".") {
		tail++
	}
	cur := "/"
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		// cur is clean and c one component: no Join (which cleans the
		// whole path again at every step).
		next := cur + "/" + c
		if cur == "/" {
			next = "/" + c
		}
		last := len(rest) <= tail
		n, in := o.nodes[next]
		if !in {
			full := filepath.Join(append([]string{next}, rest...)...)
			if pn := o.nodes[cur]; pn != nil && pn.opaque {
				return ovEntry{path: full}, eNOENT
			}
			return p.viewEntryLinks(full, follow, links)
		}
		if n == nil {
			return ovEntry{path: filepath.Join(append([]string{next}, rest...)...)}, eNOENT
		}
		if n.kind == nodeLink && (!last || follow) {
			if *links++; *links > maxSymlinks {
				return ovEntry{}, eLOOP
			}
			// The target from the link's directory (cur: the overlay's
			// links resolved), its ".." after a link taken from the
			// link's target, not lexically.
			var e int
			if abs, e = p.linkPath(cur, n.target, rest, links); e != 0 {
				return ovEntry{}, e
			}
			goto restart
		}
		if !last && n.kind != nodeDir {
			return ovEntry{}, eNOTDIR
		}
		if !last && !allows(n, 1) {
			return ovEntry{}, eACCES // no search permission: nothing below is seen
		}
		cur = next
	}
	if cur == "/" {
		return p.viewEntryLinks("/", follow, links)
	}
	return ovEntry{path: cur, node: o.nodes[cur]}, 0
}

// linkPath is the path a symbolic link leads to: its target from dir, the
// link's directory (".." as Linux takes it: walkDots, which looks nothing
// up for a target without one), then the components rest that followed
// the link in the path looked up.
func (p *Process) linkPath(dir, target string, rest []string, links *int) (string, int) {
	t, e := p.walkDots(dir, target, links)
	if e != 0 {
		return "", e
	}
	return filepath.Join(append([]string{t}, rest...)...), 0
}

// walkDots is resolve's walk of a path with ".." components (from base,
// the physical path of a directory, if path is relative): the prefix
// before each ".." is looked up, following its links (counted in
// *links).
func (p *Process) walkDots(base, path string, links *int) (string, int) {
	return walkDots(base, path, func(g string) (string, int) {
		// The emulated files (devices.go, procfs.go) are not in the
		// overlay or the view: /dev/null/.. is ENOTDIR, and
		// /proc/self/fd/N/.. the parent of directory N, as on Linux.
		if fd, ok := fdPath(g); ok {
			switch f := p.fds[fd]; {
			case f == nil:
				return "", eNOENT
			case f.kind != fileDir:
				return "", eNOTDIR
			default:
				return f.path, 0
			}
		}
		if _, ok := devMinor[g]; ok {
			return "", eNOTDIR
		}
		if n, ok := p.procFile(g, true); ok {
			if !n.isDir() {
				return "", eNOTDIR
			}
			return n.path, 0 // /proc/self/fd/.. is /proc/PID
		}
		ent, e := p.lookupLinks(g, true, links)
		switch {
		case e != 0:
			return "", e
		case !ent.isDir():
			return "", eNOTDIR
		}
		return ent.real(), 0
	})
}

// walkDots returns the clean absolute path that path names (relative to
// base, the physical path of a directory, unless absolute) with each ".."
// taken as Linux takes it: the parent of the directory the components
// before it name, once dir has resolved them (their links followed: ".."
// after a link to /a/b/c is /a/b, not the link's own directory), or the
// errno dir returns for them (ENOENT, ENOTDIR, ELOOP). Only the prefixes
// before a ".." are looked up: the caller looks up the whole path after.
func walkDots(base, path string, dir func(string) (string, int)) (string, int) {
	cur := base
	if filepath.IsAbs(path) {
		cur = "/"
	}
	// known: cur is resolved (the base, or what dir returned), so that
	// its ".." needs no lookup. Linux takes the ".." of a working
	// directory or dirfd from the directory itself, even once removed.
	known := true
	for rest := path; rest != ""; {
		var c string
		c, rest, _ = strings.Cut(rest, "/")
		switch c {
		case "", ".":
		case "..":
			if !known {
				d, e := dir(cur)
				if e != 0 {
					return "", e
				}
				cur = d
			}
			cur, known = filepath.Dir(cur), true
		default:
			if cur == "/" {
				cur = "/" + c
			} else {
				cur += "/" + c
			}
			known = false
		}
	}
	return cur, 0
}

// viewEntry looks the guest path g up in the view: a directory on the way
// to a file the user named exists too.
func (p *Process) viewEntry(g string, follow bool) (ovEntry, int) {
	links := 0
	return p.viewEntryLinks(g, follow, &links)
}

// viewEntryLinks is viewEntry, counting the symbolic links followed in
// *links.
func (p *Process) viewEntryLinks(g string, follow bool, links *int) (ovEntry, int) {
	vf, e := p.view.lookupStop(g, follow, links, true)
	if e == eRedirect {
		// A link of a named tree: its target looked up again from the
		// overlay, as the overlay's own links are (lookupLinks), so that
		// what the guest wrote, made or removed there is what it reaches.
		abs, e := p.linkPath(vf.link.dir, vf.link.target, vf.link.rest, links)
		if e != 0 {
			return ovEntry{}, e
		}
		return p.lookupLinks(abs, follow, links)
	}
	if e == 0 {
		return ovEntry{path: g, vf: vf}, 0
	}
	if e == eNOENT && p.view.aboveAllowed(g) {
		return ovEntry{path: g}, 0
	}
	return ovEntry{path: g}, e
}

// aboveAllowed reports whether the guest path g is a directory above a
// file the user named.
func (v *fsView) aboveAllowed(g string) bool {
	for a := range v.allow {
		if g == "/" || strings.HasPrefix(a, g+"/") {
			return true
		}
	}
	return false
}

// parentOf looks up the directory that would hold the guest path abs and
// returns the path abs names with its parent resolved: ENOENT if the
// parent does not exist, ENOTDIR if it is not a directory, EROFS if it is
// not writable, EACCES if its permission bits forbid it.
func (p *Process) parentOf(abs string) (string, int) {
	if abs == "/" {
		return "", eBUSY
	}
	dir, e := p.lookup(filepath.Dir(abs), true)
	if e != 0 {
		return "", e
	}
	if !dir.isDir() {
		return "", eNOTDIR
	}
	if !p.ov.writable(dir.path) {
		return "", eROFS
	}
	if !p.entryAllows(dir, 3) {
		return "", eACCES // entries are made and removed with write and search permission
	}
	return filepath.Join(dir.path, filepath.Base(abs)), 0
}

// charge counts delta more bytes against the memory cap: false (and
// nothing counted) if they do not fit.
func (p *Process) charge(delta int64) bool {
	if delta > 0 && !p.vm.fitsMore(uint64(delta)) {
		return false
	}
	if delta < 0 {
		p.vm.notePeak()
	}
	p.vm.held = uint64(int64(p.vm.held) + delta)
	p.ov.held = uint64(int64(p.ov.held) + delta)
	return true
}

// room returns how many more bytes fit under the memory cap.
func (p *Process) room() uint64 {
	if p.vm.max == 0 {
		return 1 << 62
	}
	if used := p.vm.used(); used < p.vm.max {
		return p.vm.max - used
	}
	return 0
}

// put gives node n the name path (whose parent exists), charging a new
// node's cost: ENOSPC if it does not fit. Host directories above it
// become merged directories of the overlay.
func (p *Process) put(path string, n *oNode) int {
	above := p.above(path)
	var cost uint64
	if n.cost == 0 {
		cost = uint64(nodeOverhead + int64(len(path)+len(n.target)) + n.data.footprint())
	}
	for _, d := range above {
		cost += uint64(nodeOverhead + len(d))
	}
	if !p.charge(int64(cost)) {
		return eNOSPC
	}
	p.makeDirs(above)
	if n.cost == 0 {
		n.cost = cost
		for _, d := range above {
			n.cost -= uint64(nodeOverhead + len(d))
		}
	}
	p.ov.setNode(path, n)
	return 0
}

// above returns the directories above path that are not directories of
// the overlay yet, deepest first. lookup finds an entry of the overlay
// only below directories of the overlay: every name put or whited out
// needs them.
func (p *Process) above(path string) []string {
	var above []string
	for d := filepath.Dir(path); d != "/"; d = filepath.Dir(d) {
		if x, in := p.ov.nodes[d]; in && x != nil {
			break
		}
		above = append(above, d)
	}
	return above
}

// makeDirs makes the host directories above (charged by the caller)
// merged directories of the overlay.
func (p *Process) makeDirs(above []string) {
	for _, d := range above {
		m := p.ov.newNode(nodeDir, 0o755)
		m.nlink, m.cost = 2, uint64(nodeOverhead+len(d))
		p.ov.setNode(d, m)
	}
}

// materialize makes the host directories above path directories of the
// overlay (as put does), so that a whiteout at path is seen: ENOSPC if
// they do not fit.
func (p *Process) materialize(path string) int {
	above := p.above(path)
	var cost uint64
	for _, d := range above {
		cost += uint64(nodeOverhead + len(d))
	}
	if !p.charge(int64(cost)) {
		return eNOSPC
	}
	p.makeDirs(above)
	return 0
}

// unname removes the name path of a node (a whiteout if the view has a
// file there too) and releases the node if nothing refers to it any more.
func (p *Process) unname(path string) {
	n := p.ov.nodes[path]
	p.dropName(path)
	p.entriesChanged(path)
	if n != nil {
		p.touch(n, touchChange)
		n.nlink--
		if n.kind == nodeDir {
			n.nlink = 0
		}
		p.releaseNode(n)
	}
}

// dropName removes the name path from the overlay: a whiteout if the
// view has a file there (whose directories the caller made directories of
// the overlay: materialize).
func (p *Process) dropName(path string) {
	if _, e := p.viewEntry(path, false); e == 0 {
		p.ov.setNode(path, nil)
	} else {
		p.ov.delNode(path)
	}
}

// releaseNode uncharges a node once it has no name and no descriptor
// refers to it.
func (p *Process) releaseNode(n *oNode) {
	if n == nil || n.nlink > 0 || n.cost == 0 {
		return
	}
	for _, f := range p.fds {
		if f.node == n {
			return
		}
	}
	p.charge(-int64(n.cost))
	n.cost = 0
	n.data = fileData{}
}

// resize sets a file node's size, what it grows by a hole that reads as
// zeros: ENOSPC if what that takes (a slot per chunk, and the growth of
// the last chunk if it holds data: fileData.footprintAfter) does not fit.
func (p *Process) resize(n *oNode, size int64) int {
	if size == n.data.Len() {
		return 0
	}
	return p.change(n, size, 0, 0, nil)
}

// change resizes file node n to size and then lets fill write into
// [lo, hi) (within size; lo == hi: nothing), charging the host memory that
// takes first (ENOSPC if it does not fit: nothing is changed). fill false
// is EFAULT (what it wrote stays).
func (p *Process) change(n *oNode, size, lo, hi int64, fill func(piece []byte, at int64) bool) int {
	delta := n.data.footprintAfter(size, lo, hi) - n.data.footprint()
	if !p.charge(delta) {
		return eNOSPC
	}
	n.cost = uint64(int64(n.cost) + delta)
	if n.shared {
		n.data = n.data.clone()
		n.shared = false
	}
	n.data.resize(size)
	fault := false
	if lo < hi {
		n.data.eachMut(lo, hi, func(piece []byte, at int64) bool {
			fault = !fill(piece, at)
			return !fault
		})
	}
	if fault {
		return eFAULT
	}
	return 0
}

// zeroRange makes [lo, hi) of file node n (within the file) read as
// zeros, the chunks it covers whole given back (fileData.zeroRange).
func (p *Process) zeroRange(n *oNode, lo, hi int64) {
	if lo >= hi {
		return
	}
	if n.shared {
		n.data = n.data.clone()
		n.shared = false
	}
	before := n.data.footprint()
	n.data.zeroRange(lo, hi)
	p.chargeWritten(n, before)
}

// fdEntry is what descriptor fd's path leads to, and rest below it: the
// open directory or regular file (a file of the overlay as its node, with
// or without names; one of the view by its path). Other descriptors
// (pipes, devices, anonymous inodes) are not files of the overlay or the
// view: not found here.
func (p *Process) fdEntry(fd int, rest string, follow bool, links *int) (ent ovEntry, errno int, found bool) {
	f := p.fds[fd]
	switch {
	case f == nil:
		return ovEntry{}, eNOENT, true
	case f.kind != fileDir && f.kind != fileRegular:
		return ovEntry{}, 0, false
	case rest != "" && f.kind != fileDir:
		return ovEntry{}, eNOTDIR, true
	case rest != "":
		ent, e := p.lookupLinks(f.path+"/"+rest, follow, links)
		return ent, e, true
	case f.node != nil:
		return ovEntry{path: f.path, node: f.node}, 0, true
	}
	ent, e := p.lookupLinks(f.path, true, links)
	return ent, e, true
}

// chargeWritten charges what the contents of file node n take beyond
// before, their footprint before a change made regardless of the memory
// cap (a shared mapping's bytes written back into a hole of the file,
// whose memory the guest has taken already), or gives back what they
// take less.
func (p *Process) chargeWritten(n *oNode, before int64) {
	delta := n.data.footprint() - before
	if delta <= 0 {
		p.charge(delta)
	} else {
		p.vm.held += uint64(delta)
		p.ov.held += uint64(delta)
	}
	n.cost = uint64(int64(n.cost) + delta)
}

// writeNode writes n bytes of guest memory at addr into file node nd at
// offset pos: what fits under the memory cap (ENOSPC if nothing does).
func (p *Process) writeNode(nd *oNode, addr, n uint64, pos int64) (uint64, int) {
	return p.fillNode(nd, n, pos, func(piece []byte, off uint64) bool {
		return p.Engine.ReadMem(addr+off, piece) == nil
	})
}

// fillNode writes n bytes into file node nd at offset pos, what fits
// under the memory cap (ENOSPC if nothing does), fill putting the bytes
// from offset off of the n into each piece (false: EFAULT).
func (p *Process) fillNode(nd *oNode, n uint64, pos int64, fill func(piece []byte, off uint64) bool) (uint64, int) {
	if n == 0 {
		return 0, 0
	}
	// Up to the largest file size, as generic_write_check_limits allows.
	if pos >= maxFileSize {
		return 0, eFBIG
	}
	n = min(n, uint64(maxFileSize-pos))
	size := nd.data.Len()
	// What the write takes: the chunks it fills that were holes, and the
	// file's growth (fileData.footprintAfter). What does not fit is not
	// written: the longest part that does (the cost grows with the length).
	cost := func(n uint64) int64 {
		end := pos + int64(n)
		return nd.data.footprintAfter(max(size, end), pos, end) - nd.data.footprint()
	}
	if room := p.room(); cost(n) > int64(room) { // room is at most 2^62
		lo, hi := uint64(0), n // cost(lo) fits, cost(hi) does not
		for hi-lo > 1 {
			if mid := lo + (hi-lo)/2; cost(mid) <= int64(room) {
				lo = mid
			} else {
				hi = mid
			}
		}
		if lo == 0 {
			return 0, eNOSPC
		}
		n = lo
	}
	p.touch(nd, touchModify|touchChange)
	dropSetID(nd)
	end := pos + int64(n)
	if e := p.change(nd, max(size, end), pos, end, func(piece []byte, at int64) bool {
		return fill(piece, uint64(at-pos))
	}); e != 0 {
		return 0, e
	}
	return n, 0
}

// copyUp returns the node the guest path of e becomes in the overlay,
// copying a file of the view there first; EROFS outside the writable
// trees. A directory of the view becomes a merged directory.
func (p *Process) copyUp(e ovEntry) (*oNode, int) {
	if e.node != nil {
		return e.node, 0
	}
	if !p.ov.writable(e.path) {
		return nil, eROFS
	}
	if e.vf.fi == nil || e.vf.fi.IsDir() {
		n := p.ov.newNode(nodeDir, 0o755)
		n.nlink = 2
		return n, p.put(e.path, n)
	}
	fi := e.vf.fi
	var n *oNode
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		t, err := os.Readlink(e.vf.host)
		if err != nil {
			return nil, eIO
		}
		n = &oNode{kind: nodeLink, mode: 0o777, target: t, times: epochTimes}
	case fi.Mode().IsRegular():
		if uint64(fi.Size()) > p.room() {
			return nil, eNOSPC
		}
		open := hostfile.OpenNoFollow
		if e.vf.follow {
			open = hostfile.Open
		}
		f, err := open(e.vf.host)
		if err != nil {
			return nil, hostErrno(err)
		}
		data, err := readFileData(f, fi.Size())
		f.Close()
		if err != nil {
			return nil, eIO
		}
		n = &oNode{kind: nodeFile, mode: p.viewMode(e.path, fi) & 0o7777, data: data, times: epochTimes}
	default:
		return nil, eACCES
	}
	n.ino, n.nlink = p.inode(e.vf.host), 1
	return n, p.put(e.path, n)
}

// children lists the names in directory e, sorted: the overlay's and, for
// a merged directory, the view's it does not hide.
func (p *Process) children(e ovEntry) []string {
	seen := map[string]bool{}
	var names []string
	prefix := e.path + "/"
	if e.path == "/" {
		prefix = "/"
	}
	for path, n := range p.ov.nodes {
		if strings.HasPrefix(path, prefix) && !strings.Contains(path[len(prefix):], "/") {
			seen[path[len(prefix):]] = true
			if n != nil {
				names = append(names, path[len(prefix):])
			}
		}
	}
	if e.merged() {
		for a := range p.view.allow { // the files the user named below it
			if rel, ok := strings.CutPrefix(a, prefix); ok {
				name, _, _ := strings.Cut(rel, "/")
				if !seen[name] {
					if _, e := p.viewEntry(prefix+name, false); e == 0 {
						seen[name] = true
						names = append(names, name)
					}
				}
			}
		}
		if ve, err := p.viewEntry(e.path, true); err == 0 && ve.vf.fi != nil && ve.vf.fi.IsDir() {
			ents, _ := os.ReadDir(ve.vf.host)
			for _, d := range ents {
				if !seen[d.Name()] {
					if _, e := p.view.lookup(prefix+d.Name(), false); e == 0 {
						seen[d.Name()] = true
						names = append(names, d.Name())
					}
				}
			}
		}
	}
	slices.Sort(names)
	return names
}

// dirLinks is the link count of e, a directory of the view, as Linux's
// file systems count it: 2 and one per subdirectory (the ".." in it),
// here the subdirectories the view shows (symbolic links are not).
func (p *Process) dirLinks(e ovEntry) uint64 {
	n := uint64(2)
	ents, _ := os.ReadDir(e.vf.host)
	for _, d := range ents {
		if d.IsDir() {
			if vf, errno := p.view.lookup(filepath.Join(e.path, d.Name()), false); errno == 0 && vf.fi.IsDir() {
				n++
			}
		}
	}
	return n
}

// nodeStat is the struct stat of an overlay node.
func nodeStat(n *oNode) statInfo {
	// A file without names (removed while open, O_TMPFILE, memfd) shows
	// none, as on Linux; a removed directory none either.
	st := statInfo{dev: 0x801, ino: n.ino, nlink: uint64(n.nlink), uid: guestUID, gid: guestGID, blksize: 4096, mode: n.mode}
	switch n.kind {
	case nodeFile:
		st.mode |= 0o100000
		st.size = n.data.Len()
		st.blocks = (n.data.allocated() + 4095) / 4096 * 8 // holes take none
	case nodeDir:
		st.mode |= 0o040000
		st.nlink = min(st.nlink, 2)
		st.size = 4096
	case nodeLink:
		st.mode |= 0o120000
		st.size = int64(len(n.target))
	case nodeFifo:
		st.mode |= 0o010000
	case nodeSock:
		st.mode |= 0o140000
	}
	if n.kind != nodeFile {
		st.blocks = statBlocks(st.mode, st.size)
	}
	t := n.times
	st.times = &t
	return st
}

// statBlocks is st_blocks (512-byte units) of a file of mode (with its
// type bits) and size bytes, as a file system of 4 KiB blocks (ext4's,
// tmpfs's pages: st_blksize) gives it for a file without holes: whole
// blocks; none for a symbolic link whose target is shorter than 60 bytes
// (ext4 keeps it in the inode). Not the host's own count, which depends on
// its file system, so that du and ls -s print the same on every machine.
func statBlocks(mode uint32, size int64) int64 {
	if mode&0o170000 == 0o120000 && size < 60 {
		return 0
	}
	return (size + 4095) / 4096 * 8
}

// viewMode is the st_mode of a file or directory of the view at path:
// statMode's read-only one (0444 with the host's execute bits, 0555),
// and in a writable tree, where writing copies it up (copyUp) and the
// guest owns it, with the owner's write bit too (0644, 0755): the same on
// every machine, whatever the host's umask made of the checkout.
func (p *Process) viewMode(path string, fi fs.FileInfo) uint32 {
	m := statMode(fi)
	if (fi.IsDir() || fi.Mode().IsRegular()) && p.ov.writable(path) {
		return m | 0o200
	}
	return m
}

// entryAllows is allows for what e names: a file or directory of the view
// in a writable tree by its viewMode, as it is once copied up.
func (p *Process) entryAllows(e ovEntry, want uint32) bool {
	if e.node == nil && e.vf.fi != nil && p.ov.writable(e.path) {
		return p.viewMode(e.path, e.vf.fi)>>6&want == want
	}
	return allows(e.node, want)
}

// entryStat is the struct stat of what e names.
func (p *Process) entryStat(e ovEntry) statInfo {
	if e.node != nil {
		st := nodeStat(e.node)
		if e.node.kind == nodeDir {
			st.nlink = p.dirNlink(e.path, e.node)
		}
		return st
	}
	st := (&openFile{kind: fileRegular}).stat()
	if e.vf.fi == nil { // a directory above a named file
		st.ino, st.mode, st.size, st.nlink = p.inode("dir:"+e.path), 0o040555, 4096, 2
	} else {
		st.ino, st.mode, st.size = p.inode(e.vf.host), p.viewMode(e.path, e.vf.fi), e.vf.fi.Size()
		if e.vf.fi.IsDir() {
			// Not the host's size, which depends on its file system.
			st.size, st.nlink = 4096, p.dirLinks(e)
		}
	}
	st.blocks = statBlocks(st.mode, st.size)
	return st
}

// clone copies the overlay and the descriptor table fds together: the
// copies' nodes are new, their contents shared until written (the
// originals' and the copies' marked shared), descriptors refer to the
// copies.
func (o *overlay) clone(fds map[int]*openFile, vmas []vma) (*overlay, map[int]*openFile, []vma) {
	c := &overlay{nodes: make(map[string]*oNode, len(o.nodes)), subdirs: maps.Clone(o.subdirs), roots: o.roots, nextIno: o.nextIno, held: o.held, umask: o.umask}
	copies := map[*oNode]*oNode{}
	cp := func(n *oNode) *oNode {
		if n == nil {
			return nil
		}
		x := copies[n]
		if x == nil {
			n.shared = n.data.Len() > 0
			y := *n
			x = &y
			copies[n] = x
		}
		return x
	}
	for path, n := range o.nodes {
		c.nodes[path] = cp(n)
	}
	c.cwd = cp(o.cwd)
	vmas = slices.Clone(vmas)
	for i := range vmas {
		vmas[i].node = cp(vmas[i].node)
	}
	return c, copyFiles(fds, cp), vmas
}
