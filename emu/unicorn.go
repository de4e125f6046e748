//go:build cgo

package emu

/*
// libunicorn >= 2.1 through pkg-config: the static one scripts/fetch-unicorn.sh
// puts in .deps (the Makefile sets PKG_CONFIG_PATH; by hand: eval "$(make env)"),
// or a system one.
#cgo pkg-config: unicorn
#cgo CFLAGS: -O2
#include <stdlib.h>
#include "hook.h"
#if UC_API_MAJOR < 2 || (UC_API_MAJOR == 2 && UC_API_MINOR < 1)
#error "sframesim needs libunicorn >= 2.1 (2.0's stores are ~25x slower), pkg-config found an older one: run ./setup.sh, then make, or eval \"$(make env)\" before go"
#endif
*/
import "C"

import (
	"debug/elf"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/sframesim/sframesim/arch"
)

// Error is a libunicorn error code; its text comes from uc_strerror.
type Error int

// Unicorn error codes callers branch on.
const (
	ErrOK             Error = C.UC_ERR_OK
	ErrReadUnmapped   Error = C.UC_ERR_READ_UNMAPPED
	ErrWriteUnmapped  Error = C.UC_ERR_WRITE_UNMAPPED
	ErrFetchUnmapped  Error = C.UC_ERR_FETCH_UNMAPPED
	ErrReadProt       Error = C.UC_ERR_READ_PROT
	ErrWriteProt      Error = C.UC_ERR_WRITE_PROT
	ErrFetchProt      Error = C.UC_ERR_FETCH_PROT
	ErrInsnInvalid    Error = C.UC_ERR_INSN_INVALID
	ErrException      Error = C.UC_ERR_EXCEPTION
	ErrMap            Error = C.UC_ERR_MAP
	ErrArg            Error = C.UC_ERR_ARG
	ErrNoMem          Error = C.UC_ERR_NOMEM
	ErrReadUnaligned  Error = C.UC_ERR_READ_UNALIGNED
	ErrWriteUnaligned Error = C.UC_ERR_WRITE_UNALIGNED
	ErrFetchUnaligned Error = C.UC_ERR_FETCH_UNALIGNED
)

func (e Error) Error() string {
	return "unicorn: " + C.GoString(C.uc_strerror(C.uc_err(e)))
}

// check turns a unicorn return code into an error.
func check(rc C.uc_err) error {
	if rc == C.UC_ERR_OK {
		return nil
	}
	return Error(rc)
}

// Version returns the libunicorn version linked in, e.g. "2.1.1".
func Version() string {
	var major, minor C.uint
	C.uc_version(&major, &minor)
	return fmt.Sprintf("%d.%d.%d", major, minor, (C.uc_version(nil, nil)>>8)&0xff)
}

// Prot is a set of memory permissions.
type Prot uint32

// Memory permissions.
const (
	ProtRead  Prot = C.UC_PROT_READ
	ProtWrite Prot = C.UC_PROT_WRITE
	ProtExec  Prot = C.UC_PROT_EXEC
	ProtAll   Prot = C.UC_PROT_ALL
)

func (p Prot) String() string {
	b := []byte("---")
	if p&ProtRead != 0 {
		b[0] = 'r'
	}
	if p&ProtWrite != 0 {
		b[1] = 'w'
	}
	if p&ProtExec != 0 {
		b[2] = 'x'
	}
	return string(b)
}

// PageSize is the granularity of Map, Protect and Unmap.
const PageSize = 4096

// region is guest memory backed by a host mapping, so Go reads and writes
// it directly, without a cgo call.
type region struct {
	addr uint64
	mem  []byte // host mmap
	prot Prot
	name string
}

// Engine owns one libunicorn instance. It is not safe for concurrent use.
// Close releases it; a finalizer is only a safety net.
type Engine struct {
	code    codeBuffer // Unicorn's translation buffer (codeBufferSize)
	stopReq bool       // Stop was called during this Start
	arch    *arch.Arch
	uca     *ucArch
	uc      *C.uc_engine
	st      *C.sfs_state
	// regionsCached: the engine's region lookups go through mmcache.c.
	regionsCached bool
	slot          int
	regions       []*region // sorted by addr, non-overlapping
	// lastRegion is the region of the last access: stack reads hit it.
	lastRegion *region
	closed     sync.Once

	regIDs  *C.int      // scratch for batched register access (C memory)
	regVals *C.uint64_t // 64 entries each

	onSyscall   func()
	onInterrupt func(intno uint32)
	onPortIO    func()
	onRecords   func([]Record)
	onHistory   func(r *Record, live bool)
	records     []Record // view of st.buf
	live        bool     // the record being replayed is the engine's state
	replaying   bool
	// While replaying: the store log and saved bytes, the record being
	// replayed (ri) and the first store not yet redone (rj).
	rlog   []C.sfs_write
	rsaved []byte
	ri, rj int
	rcode  bool // a logged store may change code and onCode is set

	// A write watch (history mode): watchHit is set when a store may have
	// changed [watchLo, watchHi); the stores seen there since Watch lie in
	// [touchLo, touchHi), unless touchAll (memory changed otherwise: a
	// mapping, a protection, a snapshot).
	watchLo, watchHi uint64
	watchHit         bool
	touchLo, touchHi uint64
	touchAll         bool

	// Guest page protections, as Map and Protect set them: sorted,
	// non-overlapping, adjacent ranges of equal protection merged.
	prots []protRange
	// big are the regions Unicorn has from Map larger than protChunk,
	// sorted, each with one protection (see Map and cut).
	big []span
	// maxRegions is how many regions Unicorn may have (ErrRegionLimit).
	maxRegions int
	// onCode is told where code may have changed (OnCodeWrite); histN is
	// ObserveHistory's batch size (0: off).
	onCode func(addr, size uint64)
	histN  int

	// blocks: instructions are counted per translated block (CountBlocks);
	// started: Start ran (there may be translations).
	blocks, started bool

	// tlb: Start's flushes of Unicorn's TLB (growTLB).
	tlb tlbGrowth
	// nextYield: when yieldIfDue next lets the scheduler run (yieldClock).
	nextYield time.Duration
}

// span is [lo, hi).
type span struct{ lo, hi uint64 }

// protRange is guest memory [lo, hi) with one protection.
type protRange struct {
	lo, hi uint64
	prot   Prot
}

// Record is one executed instruction as the C hook saw it, before the
// instruction ran: its address and size and the stack pointer, frame
// pointer and (AArch64) link register. It mirrors the C sfs_rec.
type Record struct {
	PC, SP, FP, RA uint64
	Size           uint32
	// N is the number of instructions the record stands for (SetMerge):
	// the one at PC and N-1 that ran after it with the same SP, FP and
	// RA, the last at LastPC (LastSize bytes). 0 or 1: only the one at PC.
	N        uint32
	LastPC   uint64
	LastSize uint32
	pcIdx    uint32 // the record's addresses in the C pcs buffer
	// Crossed counts the times the run went on into another merge
	// interval of the same class (SetMerge), or with other registers
	// (SetExtend): 0 when it lies in one.
	Crossed uint32
	_       uint32
	// Key is frame 0's return address, CFA and caller FP at PC as the
	// interval's recipe computes them (SetExtend), when Keyed is not 0.
	Key [3]uint64
	// The registers of the run's last instruction when it went on with
	// other registers (NExt > 0: RunExt says where).
	LastSP, LastFP, LastRA uint64
	Keyed, NExt            uint32
	extIdx                 uint32
	_                      uint32
}

// Record and Ext mirror C's sfs_rec and sfs_ext: the same size and the
// same offsets (the build fails otherwise).
var (
	_ [unsafe.Sizeof(Record{}) - unsafe.Sizeof(C.sfs_rec{})]struct{}
	_ [unsafe.Sizeof(C.sfs_rec{}) - unsafe.Sizeof(Record{})]struct{}
	_ [unsafe.Offsetof(Record{}.Key) - unsafe.Offsetof(C.sfs_rec{}.key)]struct{}
	_ [unsafe.Offsetof(C.sfs_rec{}.key) - unsafe.Offsetof(Record{}.Key)]struct{}
	_ [unsafe.Offsetof(Record{}.extIdx) - unsafe.Offsetof(C.sfs_rec{}.extidx)]struct{}
	_ [unsafe.Offsetof(C.sfs_rec{}.extidx) - unsafe.Offsetof(Record{}.extIdx)]struct{}
	_ [unsafe.Sizeof(Ext{}) - unsafe.Sizeof(C.sfs_ext{})]struct{}
	_ [unsafe.Sizeof(C.sfs_ext{}) - unsafe.Sizeof(Ext{})]struct{}
	_ [unsafe.Offsetof(Ext{}.SP) - unsafe.Offsetof(C.sfs_ext{}.sp)]struct{}
	_ [unsafe.Offsetof(C.sfs_ext{}.sp) - unsafe.Offsetof(Ext{}.SP)]struct{}
	_ [unsafe.Offsetof(Ext{}.Interval) - unsafe.Offsetof(C.sfs_ext{}.idx)]struct{}
	_ [unsafe.Offsetof(C.sfs_ext{}.idx) - unsafe.Offsetof(Ext{}.Interval)]struct{}
)

// Ext is where a run went on with other registers or into another merge
// interval (SetExtend): from its Member-th instruction (RunPCs index) on,
// it had SP, FP and RA, in interval Interval (an index of SetMerge's
// bounds). It mirrors the C sfs_ext.
type Ext struct {
	rec, Member uint32
	SP, FP, RA  uint64
	Interval    int32
	// Jumped: the instruction before was a branch to a register
	// (arch.FlowJump).
	Jumped uint32
}

// Recipe says how the unwinder computes frame 0's return address, CFA
// and caller FP in a merge interval (SetExtend) from the frame registers
// and up to two stack words: CFA is FP (CFAFromFP) or SP plus CFAOff; the
// return address is the link register (RAFromLR) or the word at CFA +
// RAOff, and RAMask; the caller's FP is FP (FPSame) or the word at CFA +
// FPOff. The zero Recipe is none.
type Recipe struct {
	OK                          bool
	CFAFromFP, RAFromLR, FPSame bool
	CFAOff, RAOff, FPOff        int32
	RAMask                      uint64
}

// engines maps the slot numbers the C hooks carry to engines; C never holds
// a Go pointer. Slots are taken under enginesMu; hooks read them lock-free.
var (
	enginesMu sync.Mutex
	engines   [maxEngines]atomic.Pointer[Engine]
)

// maxEngines bounds the engines open at once in one process.
const maxEngines = 4096

// openUnicorn opens a libunicorn engine for a, at user privilege, with a
// translation buffer of codeBufferSize bytes if sized (else Unicorn's
// default), and returns it with the offset of x86's old_exception in a
// saved context (sfs_user_mode).
func openUnicorn(a *arch.Arch, uca *ucArch, sized bool) (*C.uc_engine, C.int32_t, error) {
	pages := a == arch.ARM64 && pages4K.Load()
	uc, oldexc, err := openPaged(a, uca, sized, pages)
	if err == nil && pages && !pagesOK(uc) {
		// A libunicorn that took another page size than 4 KiB: its own.
		C.sfs_close(uc)
		return openPaged(a, uca, sized, false)
	}
	return uc, oldexc, err
}

// pages4K says whether new AArch64 engines get Linux's 4 KiB pages
// (pagesize.c) instead of QEMU's 1 KiB (SetSmallPages).
var pages4K atomic.Bool

func init() { pages4K.Store(true) }

// SetSmallPages has AArch64 engines made from now on use QEMU's 1 KiB
// pages instead of Linux's 4 KiB if on, and returns the previous setting.
// What the guest sees is the same; the engine's TLB covers less memory
// and it holds fewer memory regions (a page's worth: about 1 000 instead
// of 4 000). For tests that reach that limit, and for comparisons.
func SetSmallPages(on bool) bool { return !pages4K.Swap(!on) }

// pagesOK reports whether an engine has 1 KiB or 4 KiB pages, the sizes
// whose multiples the package maps.
func pagesOK(uc *C.uc_engine) bool {
	var page C.size_t
	return C.uc_query(uc, C.UC_QUERY_PAGE_SIZE, &page) == C.UC_ERR_OK && (page == 1024 || page == 4096)
}

// openPaged is openUnicorn, with 4 KiB pages if pages.
func openPaged(a *arch.Arch, uca *ucArch, sized, pages bool) (*C.uc_engine, C.int32_t, error) {
	var uc *C.uc_engine
	if err := check(C.uc_open(C.uc_arch(uca.arch), C.uc_mode(uca.mode), &uc)); err != nil {
		return nil, 0, fmt.Errorf("uc_open %s: %w", a.Name, err)
	}
	fail := func(err error) (*C.uc_engine, C.int32_t, error) {
		C.sfs_close(uc)
		return nil, 0, err
	}
	if pages {
		// (Refused by a libunicorn laid out otherwise: 1 KiB pages.)
		C.sfs_set_page_size(uc)
	}
	if sized {
		if err := check(C.sfs_set_tcg_buffer(uc, codeBufferSize)); err != nil {
			return fail(fmt.Errorf("sizing the translation buffer for %s: %w", a.Name, err))
		}
	}
	if uca.cpu >= 0 {
		if err := check(C.sfs_set_cpu_model(uc, C.int(uca.cpu))); err != nil {
			return fail(fmt.Errorf("selecting CPU model %d for %s: %w", uca.cpu, a.Name, err))
		}
	}
	var oldexc C.int32_t
	if err := check(C.sfs_user_mode(uc, C.int(b2i(a == arch.ARM64)), &oldexc)); err != nil {
		return fail(fmt.Errorf("running %s at user privilege: %w", a.Name, err))
	}
	var size C.uint32_t
	if err := check(C.sfs_get_tcg_buffer(uc, &size)); err != nil { // made by now
		return fail(fmt.Errorf("reading the translation buffer's size for %s: %w", a.Name, err))
	}
	return uc, oldexc, nil
}

// openWatched is openUnicorn with the engine's translation buffer found
// (see codeBufferSize). Where it cannot be found, the engine has
// Unicorn's default buffer, unwatched.
func openWatched(a *arch.Arch, uca *ucArch) (*C.uc_engine, C.int32_t, codeBuffer, error) {
	openMu.Lock()
	defer openMu.Unlock()
	before, err := rwxMappings()
	if err == nil {
		uc, oldexc, err := openUnicorn(a, uca, true)
		if err != nil {
			return nil, 0, codeBuffer{}, err
		}
		after, err := rwxMappings()
		if err == nil {
			var code codeBuffer
			if code, err = findCodeBuffer(before, after); err == nil {
				return uc, oldexc, code, nil
			}
		}
		C.sfs_close(uc)
	}
	uc, oldexc, err := openUnicorn(a, uca, false)
	return uc, oldexc, codeBuffer{}, err
}

// NewEngine opens an engine for a with the hooks installed.
func NewEngine(a *arch.Arch) (*Engine, error) {
	uca := ucArchOf(a)
	if uca == nil {
		return nil, fmt.Errorf("emu: no libunicorn engine for %s", a.Name)
	}
	e := &Engine{arch: a, uca: uca}
	uc, oldexc, code, err := openWatched(a, uca)
	if err != nil {
		return nil, err
	}
	e.uc, e.code = uc, code
	e.st = C.sfs_state_new()
	if e.st == nil {
		C.sfs_close(uc)
		return nil, fmt.Errorf("allocating the hook state for %s: out of memory", a.Name)
	}
	e.st.oldexc_off = oldexc
	e.regIDs = (*C.int)(C.calloc(64, C.size_t(unsafe.Sizeof(C.int(0)))))
	e.regVals = (*C.uint64_t)(C.calloc(64, 8))
	e.st.uc = uc
	if code.lo != 0 {
		C.sfs_cg_watch(e.st, C.uintptr_t(code.lo+codeFull))
	}
	frame := e.frameRegs()
	for i, r := range frame {
		e.st.regs[i] = C.int(r)
	}
	e.st.nregs = C.int(len(frame))

	enginesMu.Lock()
	e.slot = -1
	for i := range engines {
		if engines[i].Load() == nil {
			e.slot = i
			engines[i].Store(e)
			break
		}
	}
	enginesMu.Unlock()
	if e.slot < 0 {
		C.sfs_close(uc)
		C.free(unsafe.Pointer(e.st))
		C.free(unsafe.Pointer(e.regIDs))
		C.free(unsafe.Pointer(e.regVals))
		return nil, fmt.Errorf("more than %d engines open at once", maxEngines)
	}
	e.st.slot = C.int32_t(e.slot)
	e.st.limit = C.uint64_t(^uint64(0))
	if a == arch.ARM64 {
		e.st.arm64 = 1
	}

	if err := check(C.sfs_hooks_install(e.st, C.int(uca.arch))); err != nil {
		e.Close()
		return nil, fmt.Errorf("installing hooks: %w", err)
	}
	if cacheRegions.Load() {
		e.regionsCached = C.sfs_mm_patch(uc, e.st.arm64) != 0
	}
	var page C.size_t
	if err := check(C.uc_query(uc, C.UC_QUERY_PAGE_SIZE, &page)); err != nil {
		e.Close()
		return nil, fmt.Errorf("querying the page size: %w", err)
	}
	e.maxRegions = int(page) - regionReserve
	if a == arch.ARM64 {
		if err := e.enablePAuth(); err != nil {
			e.Close()
			return nil, fmt.Errorf("enabling pointer authentication: %w", err)
		}
	}
	return e, nil
}

// cacheRegions says whether new engines look the regions of guest
// addresses up through mmcache.c's cache (a test compares with Unicorn's
// own lookup).
var cacheRegions atomic.Bool

func init() { cacheRegions.Store(true) }

// RegionsCached reports whether the engine looks the regions of guest
// addresses up through a cache (mmcache.c): false if the libunicorn it is
// linked with is not laid out as expected.
func (e *Engine) RegionsCached() bool { return e.regionsCached }

// regionLookupExported reports whether libunicorn exports the region
// lookup of an architecture (mmcache.c can only cache it then).
func regionLookupExported(a *arch.Arch) bool {
	return C.sfs_mm_available(C.int(b2i(a == arch.ARM64))) != 0
}

// Close releases the engine and its memory. It is idempotent.
func (e *Engine) Close() error {
	var err error
	e.closed.Do(func() {
		openMu.Lock()
		err = check(C.sfs_close(e.uc))
		openMu.Unlock()
		e.uc = nil
		for _, r := range e.regions {
			syscall.Munmap(r.mem)
		}
		e.regions, e.lastRegion = nil, nil
		if e.st.buf != nil {
			C.free(unsafe.Pointer(e.st.buf))
		}
		C.sfs_free_history(e.st)
		C.sfs_blocks_forget(e.st)
		C.free(unsafe.Pointer(e.st))
		C.free(unsafe.Pointer(e.regIDs))
		C.free(unsafe.Pointer(e.regVals))
		e.st = nil
		enginesMu.Lock()
		engines[e.slot].Store(nil)
		enginesMu.Unlock()
	})
	return err
}

// Arch returns the engine's architecture.
func (e *Engine) Arch() *arch.Arch { return e.arch }

// ErrRegionLimit: Unicorn cannot take more memory regions. Its table of
// the address space's sections holds one target page's worth of entries
// (4096 with 4 KiB pages, 1024 on AArch64 with 1 KiB ones: SetSmallPages),
// and it aborts the process past that:
// Map and Protect refuse instead, while RegionRoom says how many more
// there may be.
var ErrRegionLimit = errors.New("too many memory regions for the emulator")

// regionReserve is how many of Unicorn's section entries Map and Protect
// leave unused: four are its own, and the count of regions is not the
// count of sections to the last one.
const regionReserve = 32

// RegionRoom returns how many more regions Unicorn can take: Map adds
// MapRegions, Protect at most ProtectRegions (and often takes some away:
// coalesce).
func (e *Engine) RegionRoom() int { return e.maxRegions - e.Regions() }

// ProtectRegions returns how many regions Protect(addr, size) may add to
// Unicorn's: one for each end that falls inside a region (Unicorn splits
// it there), three if that region is bigger than protChunk (cut first).
// A change of whole regions adds none.
func (e *Engine) ProtectRegions(addr, size uint64) int {
	return protectRegions(e.unicornRegions(), addr, size)
}

// protectRegions is ProtectRegions over Unicorn's regions regs.
func protectRegions(regs []protRange, addr, size uint64) int {
	n := 0
	for _, at := range [2]uint64{addr, addr + size} {
		i := sort.Search(len(regs), func(i int) bool { return regs[i].hi > at })
		if i < len(regs) && regs[i].lo < at {
			n++
			if regs[i].hi-regs[i].lo > protChunk {
				n += 2
			}
		}
	}
	return n
}

// MapRegions returns how many regions Map gives Unicorn for [addr,
// addr+size) (size > 0).
func MapRegions(addr, size uint64) int { return int((addr+size-1)/mapChunk - addr/mapChunk + 1) }

// Regions returns how many regions Unicorn has.
func (e *Engine) Regions() int {
	var regs *C.uc_mem_region
	var n C.uint32_t
	if C.uc_mem_regions(e.uc, &regs, &n) != C.UC_ERR_OK {
		return e.maxRegions // unknown: no room
	}
	C.uc_free(unsafe.Pointer(regs))
	return int(n)
}

// Unicorn gets guest memory in regions of at most mapChunk bytes; where the
// protection of part of one changes, the protChunk bytes around the place
// become a region of their own (cut).
//
// Few regions keep Unicorn fast: each is a block of its RAM list, which
// it searches linearly for the code's block whenever it looks a
// translated block up in its hash table (after every TLB flush, and every
// map and protect flushes), and a map flushes twice per region. zstd -19,
// whose glibc reserves a 128 MiB arena, ran 2.2 s under `sframesim run` in
// 2 MiB regions and 1.3 s in 64 MiB ones.
//
// But changing the protection of part of a region splits it, which flushes
// Unicorn's TLB page by page over the whole region: 670 µs per mprotect
// inside a 64 MiB region (as glibc's malloc grows an arena), 110 µs in 2
// MiB pieces (smaller ones cost more: every change also walks all of
// Unicorn's regions). Hence cut.
const (
	mapChunk  = 64 << 20
	protChunk = 2 << 20
)

// Map maps [addr, addr+size) with prot, backed by fresh zeroed host memory,
// and returns that memory. addr and size must be page-aligned.
func (e *Engine) Map(addr, size uint64, prot Prot, name string) ([]byte, error) {
	if addr%PageSize != 0 || size%PageSize != 0 || size == 0 {
		return nil, fmt.Errorf("map %#x+%#x: not page-aligned", addr, size)
	}
	if pieces := MapRegions(addr, size); pieces > e.RegionRoom() {
		return nil, fmt.Errorf("map %#x+%#x (%s): %w", addr, size, name, ErrRegionLimit)
	}
	// MAP_NORESERVE: host pages are only taken when touched, and what the
	// guest can touch is bounded by its users (linux's memory cap counts
	// accessible mappings, not address space reserved PROT_NONE, which a
	// program may reserve by the gigabyte), so the host's heuristic
	// overcommit check need not refuse a large reservation.
	mem, err := syscall.Mmap(-1, 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
	if err != nil {
		return nil, fmt.Errorf("map %#x+%#x (%s): host mmap: %w", addr, size, name, err)
	}
	var big []span
	for off := uint64(0); off < size; {
		n := min(mapChunk-(addr+off)%mapChunk, size-off)
		if err := check(C.sfs_mem_map_ptr(e.uc, C.uint64_t(addr+off), C.size_t(n), C.uint32_t(prot), unsafe.Pointer(&mem[off]))); err != nil {
			if off > 0 {
				C.sfs_mem_unmap(e.uc, C.uint64_t(addr), C.size_t(off))
			}
			syscall.Munmap(mem)
			return nil, fmt.Errorf("map %#x+%#x (%s): %w", addr, size, name, err)
		}
		if n > protChunk {
			big = append(big, span{addr + off, addr + off + n})
		}
		off += n
	}
	if len(big) > 0 {
		e.big = append(e.big, big...)
		sort.Slice(e.big, func(i, j int) bool { return e.big[i].lo < e.big[j].lo })
	}
	r := &region{addr: addr, mem: mem, prot: prot, name: name}
	i := sort.Search(len(e.regions), func(i int) bool { return e.regions[i].addr > addr })
	e.regions = append(e.regions, nil)
	copy(e.regions[i+1:], e.regions[i:])
	e.regions[i] = r
	e.syncRegions()
	e.touchedAll()
	e.setProt(addr, addr+size, prot)
	return mem, nil
}

// syncRegions gives the C write hook the current region table.
func (e *Engine) syncRegions() {
	C.free(unsafe.Pointer(e.st.regions))
	e.st.regions = (*C.sfs_region)(C.calloc(C.size_t(len(e.regions)), C.size_t(unsafe.Sizeof(C.sfs_region{}))))
	rs := unsafe.Slice(e.st.regions, len(e.regions))
	for i, r := range e.regions {
		rs[i] = C.sfs_region{addr: C.uint64_t(r.addr), size: C.uint64_t(len(r.mem)), host: (*C.uint8_t)(unsafe.Pointer(&r.mem[0]))}
	}
	e.st.nregions = C.int32_t(len(e.regions))
	e.st.lastregion, e.st.prevregion = 0, 0
}

// Protect changes the permissions of whole mapped pages.
func (e *Engine) Protect(addr, size uint64, prot Prot) error {
	if regs := e.unicornRegions(); protectRegions(regs, addr, size) > e.maxRegions-len(regs) {
		return fmt.Errorf("protect %#x+%#x %s: %w", addr, size, prot, ErrRegionLimit)
	}
	for _, at := range [2]uint64{addr, addr + size} {
		if err := e.cut(at); err != nil {
			return fmt.Errorf("protect %#x+%#x %s: %w", addr, size, prot, err)
		}
	}
	if err := check(C.sfs_mem_protect(e.uc, C.uint64_t(addr), C.size_t(size), C.uint32_t(prot))); err != nil {
		return fmt.Errorf("protect %#x+%#x %s: %w", addr, size, prot, err)
	}
	if err := e.coalesce(addr, addr+size); err != nil {
		return fmt.Errorf("protect %#x+%#x %s: %w", addr, size, prot, err)
	}
	e.touchedAll()
	e.setProt(addr, addr+size, prot)
	return nil
}

// coalesce joins Unicorn's regions with the same protection and adjacent
// host memory (of one Map) that lie within one protChunk-aligned piece of
// address space touching [lo, hi], once there are more than joinAbove. Unicorn splits a region wherever the
// protection of part of it changes and never joins them again: an arena
// that malloc grows page by page (an mprotect each time) would leave a
// region per step, thousands, and the cost of Unicorn's every map,
// protect and block lookup grows with their number (adding a region
// takes time quadratic in it: a 4-thread malloc loop that takes 0.1 s
// natively ran 110 s). Joined within the piece, a region's few pages cost
// at most a piece's to flush.
func (e *Engine) coalesce(lo, hi uint64) error {
	regs := e.unicornRegions()
	if len(regs) <= joinAbove {
		return nil
	}
	first := lo - min(lo, 1) // the piece before lo may end in a region lo joins
	first -= first % protChunk
	i := sort.Search(len(regs), func(i int) bool { return regs[i].hi > first })
	for i < len(regs) && regs[i].lo <= hi {
		r := e.findRegion(regs[i].lo)
		if r == nil {
			i++
			continue
		}
		// Up to the piece's end, and the end of the Map (the host memory
		// of two Maps is not contiguous).
		end := min(regs[i].lo-regs[i].lo%protChunk+protChunk, r.addr+uint64(len(r.mem)))
		j := i + 1
		for j < len(regs) && regs[j].lo == regs[j-1].hi && regs[j].prot == regs[i].prot && regs[j].hi <= end {
			j++
		}
		if j-i > 1 {
			if err := e.join(r, regs[i].lo, regs[j-1].hi, regs[i].prot); err != nil {
				return err
			}
		}
		i = j
	}
	return nil
}

// joinAbove is how many regions Unicorn may have before coalesce joins
// any: each join is two changes of its address space, which rebuild its
// tables, and while they are few nothing gains from them (a program
// mapping, protecting a page of and unmapping the same memory 20 000
// times took 25% longer with joins at every step).
const joinAbove = 64

// join gives Unicorn [lo, hi), which it has in several regions with
// protection prot, as one region; r's memory backs it.
func (e *Engine) join(r *region, lo, hi uint64, prot Prot) error {
	if err := check(C.sfs_mem_unmap(e.uc, C.uint64_t(lo), C.size_t(hi-lo))); err != nil {
		return fmt.Errorf("joining Unicorn's regions %#x-%#x: %w", lo, hi, err)
	}
	if err := check(C.sfs_mem_map_ptr(e.uc, C.uint64_t(lo), C.size_t(hi-lo), C.uint32_t(prot), unsafe.Pointer(&r.mem[lo-r.addr]))); err != nil {
		return fmt.Errorf("joining Unicorn's regions %#x-%#x: %w", lo, hi, err)
	}
	if prot&ProtExec != 0 {
		e.removeCache(lo, hi)
	}
	return nil
}

// cut gives Unicorn the big region strictly around at, if any, again in
// up to three regions with the same memory and protection: the protChunk
// bytes around at, and what lies before and after them (see mapChunk).
// Only the small one is split again where the protection changes at at,
// and where it changes next, in small steps as an arena grows, it most
// often still falls there.
func (e *Engine) cut(at uint64) error {
	i := sort.Search(len(e.big), func(i int) bool { return e.big[i].hi > at })
	if i == len(e.big) || at <= e.big[i].lo {
		return nil
	}
	b := e.big[i]
	r := e.findRegion(b.lo)
	if r == nil || b.hi-r.addr > uint64(len(r.mem)) {
		return fmt.Errorf("no host memory for Unicorn's region %#x-%#x", b.lo, b.hi)
	}
	prot := e.protAt(b.lo)
	if err := check(C.sfs_mem_unmap(e.uc, C.uint64_t(b.lo), C.size_t(b.hi-b.lo))); err != nil {
		return fmt.Errorf("cutting Unicorn's region %#x-%#x: %w", b.lo, b.hi, err)
	}
	m0 := max(b.lo, at-at%protChunk)
	m1 := min(b.hi, m0+protChunk)
	var big []span
	for _, p := range [3]span{{b.lo, m0}, {m0, m1}, {m1, b.hi}} {
		if p.lo == p.hi {
			continue
		}
		if err := check(C.sfs_mem_map_ptr(e.uc, C.uint64_t(p.lo), C.size_t(p.hi-p.lo), C.uint32_t(prot), unsafe.Pointer(&r.mem[p.lo-r.addr]))); err != nil {
			return fmt.Errorf("cutting Unicorn's region %#x-%#x: %w", b.lo, b.hi, err)
		}
		if p.hi-p.lo > protChunk {
			big = append(big, p)
		}
	}
	e.big = slices.Replace(e.big, i, i+1, big...)
	if prot&ProtExec != 0 {
		// Unicorn's code-write tracking starts afresh with new regions:
		// its translations there are made again.
		e.removeCache(b.lo, b.hi)
	}
	return nil
}

// unicornRegions returns the regions Unicorn has, sorted, with their
// protections.
func (e *Engine) unicornRegions() []protRange {
	var regs *C.uc_mem_region
	var n C.uint32_t
	if C.uc_mem_regions(e.uc, &regs, &n) != C.UC_ERR_OK {
		return nil
	}
	defer C.uc_free(unsafe.Pointer(regs))
	var out []protRange
	for _, r := range unsafe.Slice(regs, int(n)) {
		out = append(out, protRange{uint64(r.begin), uint64(r.end) + 1, Prot(r.perms)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].lo < out[j].lo })
	return out
}

// protAt returns the protection of the page at addr (0 if unmapped).
func (e *Engine) protAt(addr uint64) Prot {
	for _, r := range e.prots {
		if r.lo <= addr && addr < r.hi {
			return r.prot
		}
	}
	return 0
}

// setProt records that [lo, hi) now has protection prot. Code there may
// be other code now (new memory, or written while not executable): its
// translations and decodings are dropped. The code ranges the write hook
// watches follow.
func (e *Engine) setProt(lo, hi uint64, prot Prot) {
	var out []protRange
	add := func(r protRange) {
		if r.hi <= r.lo {
			return
		}
		if n := len(out); n > 0 && out[n-1].hi == r.lo && out[n-1].prot == r.prot {
			out[n-1].hi = r.hi
			return
		}
		out = append(out, r)
	}
	for _, r := range e.prots { // the parts before lo
		if r.lo < lo {
			add(protRange{r.lo, min(r.hi, lo), r.prot})
		}
	}
	add(protRange{lo, hi, prot})
	for _, r := range e.prots { // the parts after hi
		if r.hi > hi {
			add(protRange{max(r.lo, hi), r.hi, r.prot})
		}
	}
	e.prots = out
	if prot&ProtExec != 0 {
		e.removeCache(lo, hi)
		C.sfs_blocks_forget(e.st)
		C.sfs_keep_forget(e.st)
	}
	if e.onCode != nil {
		e.onCode(lo, hi-lo)
	}
	e.syncCode()
}

// executable reports whether any page of [addr, addr+size) is executable.
func (e *Engine) executable(addr, size uint64) bool { return e.hasProt(addr, size, ProtExec) }

// hasProt reports whether some of [addr, addr+size) has protection p.
func (e *Engine) hasProt(addr, size uint64, p Prot) bool {
	for _, r := range e.prots {
		if r.lo < addr+size && r.hi > addr && r.prot&p != 0 {
			return true
		}
	}
	return false
}

// syncCode gives the write hook the writable and executable ranges, where a
// guest store may change code.
func (e *Engine) syncCode() {
	var code []uint64
	for _, r := range e.prots {
		if r.prot&(ProtWrite|ProtExec) != ProtWrite|ProtExec {
			continue
		}
		if n := len(code); n > 0 && code[n-1] == r.lo {
			code[n-1] = r.hi
			continue
		}
		code = append(code, r.lo, r.hi)
	}
	C.free(unsafe.Pointer(e.st.code))
	e.st.code, e.st.ncode = nil, 0
	if len(code) > 0 {
		e.st.code = (*C.uint64_t)(C.calloc(C.size_t(len(code)), 8))
		c := unsafe.Slice(e.st.code, len(code))
		for i, v := range code {
			c[i] = C.uint64_t(v)
		}
		e.st.ncode = C.int32_t(len(code) / 2)
	}
}

// syncWriteHook installs the write hook in the mode the observer needs: to
// log stores in batched history mode, to note stores into code one at a
// time. It is installed before the run, whether or not there is writable
// code yet: a hook added later would miss stores of code Unicorn had
// translated before.
func (e *Engine) syncWriteHook() error {
	track := C.SFS_TRACK_NONE
	switch {
	case e.onHistory == nil:
	case e.histN > 1:
		track = C.SFS_TRACK_LOG
	default:
		track = C.SFS_TRACK_CODE
	}
	if err := check(C.sfs_track_writes(e.st, C.int(track))); err != nil {
		return fmt.Errorf("installing the store hook: %w", err)
	}
	return nil
}

// syncSMCHook gives an engine counting per instruction without a store
// hook of its own (no history observer) one that does nothing: Unicorn
// 2.1.1 drops the translation of code the guest rewrites in place (a
// JIT's) only when stores take its slow path, which a memory hook makes
// them take; without one, the old code ran on AArch64. It is there from
// the start, before any code is written: stores translated the fast way
// would be missed (the translations of executable memory are dropped when
// it comes later). Counting per block finds rewritten code itself
// (hook_block_slow) and goes without it.
func (e *Engine) syncSMCHook() error {
	want := !e.blocks && e.st.write_hook == 0
	if want == (e.st.smc_hook != 0) {
		return nil
	}
	if err := check(C.sfs_smc_hook(e.st, boolInt(want))); err != nil {
		return fmt.Errorf("installing the store hook for rewritten code: %w", err)
	}
	if e.started {
		for _, r := range e.prots {
			if r.prot&ProtExec != 0 {
				e.removeCache(r.lo, r.hi)
			}
		}
	}
	return nil
}

// boolInt is 1 for true, 0 for false, as a C int.
func boolInt(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// OnCodeWrite sets a function told where guest code may have changed: a
// guest store into writable and executable memory (in history mode, right
// before the first record that sees it), a write by the host (WriteMem,
// ZeroMem) into executable memory, and new or re-protected memory (Map,
// Protect). Whatever decoded the code there must decode it again.
// Unicorn's own translations are taken care of.
func (e *Engine) OnCodeWrite(fn func(addr, size uint64)) { e.onCode = fn }

// hostWrote handles a write by the host into [addr, addr+size): Unicorn
// does not see it, so its translations of code there are dropped.
func (e *Engine) hostWrote(addr, size uint64) {
	e.noteWrite(addr, size)
	if size == 0 || !e.executable(addr, size) {
		return
	}
	e.removeCache(addr, addr+size)
	C.sfs_blocks_forget(e.st)
	C.sfs_keep_forget(e.st)
	if e.onCode != nil {
		e.onCode(addr, size)
	}
}

// region returns the region containing addr, or nil.
func (e *Engine) region(addr uint64) *region {
	if r := e.lastRegion; r != nil && addr-r.addr < uint64(len(r.mem)) {
		return r
	}
	r := e.findRegion(addr)
	if r != nil {
		e.lastRegion = r
	}
	return r
}

func (e *Engine) findRegion(addr uint64) *region {
	i := sort.Search(len(e.regions), func(i int) bool { return e.regions[i].addr > addr }) - 1
	if i < 0 {
		return nil
	}
	r := e.regions[i]
	if addr-r.addr >= uint64(len(r.mem)) {
		return nil
	}
	return r
}

// ReadMem copies guest memory at addr into buf, straight from the host
// mapping. It fails if any byte is unmapped.
func (e *Engine) ReadMem(addr uint64, buf []byte) error {
	for len(buf) > 0 {
		r := e.region(addr)
		if r == nil {
			return fmt.Errorf("read %#x: %w", addr, ErrReadUnmapped)
		}
		n := copy(buf, r.mem[addr-r.addr:])
		buf = buf[n:]
		addr += uint64(n)
	}
	return nil
}

// WriteMem copies buf into guest memory at addr (ignoring guest
// permissions, as a loader or the kernel does).
func (e *Engine) WriteMem(addr uint64, buf []byte) error {
	e.hostWrote(addr, uint64(len(buf)))
	for len(buf) > 0 {
		r := e.region(addr)
		if r == nil {
			return fmt.Errorf("write %#x: %w", addr, ErrWriteUnmapped)
		}
		n := copy(r.mem[addr-r.addr:], buf)
		buf = buf[n:]
		addr += uint64(n)
	}
	return nil
}

// ZeroMem clears guest memory [addr, addr+size) through the host mapping,
// up to the first unmapped byte.
func (e *Engine) ZeroMem(addr, size uint64) {
	e.hostWrote(addr, size)
	for end := addr + size; addr < end; {
		r := e.region(addr)
		if r == nil {
			return
		}
		off := addr - r.addr
		n := min(uint64(len(r.mem))-off, end-addr)
		zero(r.mem[off : off+n])
		addr += n
	}
}

// zero clears b, a part of a region's anonymous host mapping: whole pages
// are handed back to the host kernel (MADV_DONTNEED), which reads them as
// zeros from then on without touching them (a munmap'd thread stack of
// several MiB costs nothing, and the host's memory is freed); the rest is
// cleared by hand.
func zero(b []byte) {
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := (p + PageSize - 1) &^ (PageSize - 1)
	hi := (p + uintptr(len(b))) &^ (PageSize - 1)
	if hi <= lo || hi-lo < 16*PageSize {
		clear(b)
		return
	}
	a, z := int(lo-p), int(hi-p)
	if err := syscall.Madvise(b[a:z], syscall.MADV_DONTNEED); err != nil {
		clear(b[a:z])
	}
	clear(b[:a])
	clear(b[z:])
}

// Read64 reads a little-endian 64-bit word of guest memory.
func (e *Engine) Read64(addr uint64) (uint64, error) {
	if r := e.region(addr); r != nil && addr-r.addr+8 <= uint64(len(r.mem)) {
		m := r.mem[addr-r.addr:]
		return uint64(m[0]) | uint64(m[1])<<8 | uint64(m[2])<<16 | uint64(m[3])<<24 |
			uint64(m[4])<<32 | uint64(m[5])<<40 | uint64(m[6])<<48 | uint64(m[7])<<56, nil
	}
	var b [8]byte
	if err := e.ReadMem(addr, b[:]); err != nil {
		return 0, err
	}
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56, nil
}

// Reg reads one register.
func (e *Engine) Reg(id RegID) (uint64, error) {
	var v C.uint64_t
	if err := check(C.uc_reg_read(e.uc, C.int(id), unsafe.Pointer(&v))); err != nil {
		return 0, fmt.Errorf("reading register %d: %w", id, err)
	}
	return uint64(v), nil
}

// SetReg writes one register.
func (e *Engine) SetReg(id RegID, v uint64) error {
	val := C.uint64_t(v)
	if err := check(C.uc_reg_write(e.uc, C.int(id), unsafe.Pointer(&val))); err != nil {
		return fmt.Errorf("writing register %d: %w", id, err)
	}
	return nil
}

// RegBytes reads a register wider than 64 bits (x87, XMM, AArch64 V
// registers: up to 64 bytes) into buf, as libunicorn lays it out: little
// endian, len(buf) bytes (10 for an x87 register, 16 for XMM and V).
func (e *Engine) RegBytes(id RegID, buf []byte) error {
	if len(buf) > 64*8 {
		return fmt.Errorf("RegBytes: %d bytes", len(buf))
	}
	c := unsafe.Slice((*byte)(unsafe.Pointer(e.regVals)), 64*8)
	clear(c[:len(buf)+8])
	if err := check(C.uc_reg_read(e.uc, C.int(id), unsafe.Pointer(e.regVals))); err != nil {
		return fmt.Errorf("reading register %d: %w", id, err)
	}
	copy(buf, c)
	return nil
}

// SetRegBytes writes a register wider than 64 bits from buf (see RegBytes).
func (e *Engine) SetRegBytes(id RegID, buf []byte) error {
	if len(buf) > 64*8 {
		return fmt.Errorf("SetRegBytes: %d bytes", len(buf))
	}
	c := unsafe.Slice((*byte)(unsafe.Pointer(e.regVals)), 64*8)
	clear(c[:len(buf)+8])
	copy(c, buf)
	if err := check(C.uc_reg_write(e.uc, C.int(id), unsafe.Pointer(e.regVals))); err != nil {
		return fmt.Errorf("writing register %d: %w", id, err)
	}
	return nil
}

// ReadRegs reads len(ids) (at most 64) registers into out with one cgo call.
func (e *Engine) ReadRegs(ids []RegID, out []uint64) error {
	n := len(ids)
	if n > 64 || len(out) < n {
		return fmt.Errorf("ReadRegs: %d registers, %d slots", n, len(out))
	}
	cids := unsafe.Slice(e.regIDs, 64)
	for i, id := range ids {
		cids[i] = C.int(id)
	}
	if err := check(C.sfs_reg_read_batch(e.uc, e.regIDs, e.regVals, C.int(n))); err != nil {
		return fmt.Errorf("reading registers: %w", err)
	}
	vals := unsafe.Slice(e.regVals, 64)
	for i := range n {
		out[i] = uint64(vals[i])
	}
	return nil
}

// WriteRegs writes len(ids) (at most 64) registers with one cgo call.
func (e *Engine) WriteRegs(ids []RegID, vals []uint64) error {
	n := len(ids)
	if n > 64 || len(vals) < n {
		return fmt.Errorf("WriteRegs: %d registers, %d values", n, len(vals))
	}
	cids := unsafe.Slice(e.regIDs, 64)
	cvals := unsafe.Slice(e.regVals, 64)
	for i, id := range ids {
		cids[i] = C.int(id)
		cvals[i] = C.uint64_t(vals[i])
	}
	if err := check(C.sfs_reg_write_batch(e.uc, e.regIDs, e.regVals, C.int(n))); err != nil {
		return fmt.Errorf("writing registers: %w", err)
	}
	return nil
}

// Start runs from begin until the PC reaches until, timeout passes (0: no
// limit), count instructions have run (0: no limit), a hook calls Stop, or
// an error occurs.
func (e *Engine) Start(begin, until uint64, timeout time.Duration, count uint64) error {
	e.yieldIfDue()
	e.stopReq = false
	e.flushCodeIfFull()
	if err := e.growTLB(); err != nil {
		return err
	}
	if err := e.syncSMCHook(); err != nil {
		return err
	}
	if e.blocks {
		return e.startBlocks(begin, until, timeout, count)
	}
	e.started = true
	// The code hook counts and stops at the budget: Unicorn's count would
	// add a hook of its own on every instruction. Without the code hook
	// (RemoveCodeHook), Unicorn counts. With it, the engine also stops
	// every probeEvery instructions, or when the translation buffer is
	// found full, and goes on at once (see codeBufferSize).
	hooked := e.st.code_hook != 0
	lim := C.uint64_t(^uint64(0))
	ucCount := count
	if count > 0 && hooked {
		lim, ucCount = e.st.count+C.uint64_t(count), 0
	}
	start, left := time.Now(), timeout
	var err error
	for {
		e.st.limit = lim
		if hooked {
			if e.st.cg_want != 0 {
				e.flushCode()
			}
			e.st.limit = e.probeLimit(lim)
		}
		e.st.kvalid = 0 // registers may have been set
		err = check(C.uc_emu_start(e.uc, C.uint64_t(begin), C.uint64_t(until), C.uint64_t(left/time.Microsecond), C.size_t(ucCount)))
		if err != nil || e.stopReq || e.st.limit >= lim || e.st.count < e.st.limit {
			break
		}
		// Stopped only for a look at the translation buffer.
		var ok bool
		if left, ok = remaining(timeout, start); !ok {
			break
		}
		if e.onHistory != nil {
			e.FlushRecords()
		}
		e.flushCodeIfFull()
		if begin, err = e.PC(); err != nil {
			break
		}
	}
	e.st.limit = C.uint64_t(^uint64(0))
	if e.onHistory != nil {
		e.FlushRecords()
	}
	if e.st.track < 0 {
		return errors.New("recording guest stores: out of memory")
	}
	return err
}

// Unicorn's software TLB (QEMU's softmmu: the cache that maps a guest
// page to host memory on every load and store of translated code) starts
// with 256 entries (1 MiB of guest memory; 256 KiB on AArch64 with QEMU's
// 1 KiB pages, see SetSmallPages), and QEMU resizes it only when
// it is flushed: twice as large when more than 70% of it was used, smaller
// when under 30% was for 100 ms. A user-mode run flushes it only when
// mappings change, so it keeps 256 entries, and a program whose data spans
// more pages (a compressor's match finder, a large hash table, a database
// cache) misses on most accesses: a call out of the translated code and a
// walk of the memory map each time. Start flushes it between engine runs so
// that it follows the program's working set: every tlbFirst instructions
// tlbQuick times (enough to grow from 256 entries to the most QEMU allows),
// then at intervals that double up to tlbMaxEvery, so that the refills
// after a flush stay a small part of a long run. The TLB's size changes
// only the speed: what the guest sees does not depend on it.
const (
	tlbFirst    = 1 << 20
	tlbQuick    = 32
	tlbMaxEvery = 64 << 20
)

// tlbGrowth is the state of Start's TLB flushes.
type tlbGrowth struct {
	off     bool   // SetTLBGrowth(false)
	last    uint64 // Executed at the last flush
	every   uint64 // instructions from one flush to the next
	flushes int
}

// SetTLBGrowth switches Start's flushes of Unicorn's TLB on (the default)
// or off (it then keeps its first size; for measuring).
func (e *Engine) SetTLBGrowth(on bool) { e.tlb.off = !on }

// TLBFlushes returns how many times Start has flushed Unicorn's TLB.
func (e *Engine) TLBFlushes() int { return e.tlb.flushes }

// yieldEvery is how often yieldIfDue lets Go's scheduler run.
//
// The goroutine running an engine spends nearly all its time in C, in one
// call of Unicorn's that Go sees as a system call, coming back into Go
// only for the engine's hooks and between Starts, and is never
// rescheduled. Go's monitor thread (sysmon) takes a goroutine that has
// not been rescheduled for 10 ms for one that hogs the CPU: it sends the
// thread a preemption signal when it finds it in Go, takes the scheduler's
// P away when it finds it in C (the next return into Go must find one
// again), and after every such take checks again at 20 µs intervals
// instead of 10 ms. On lua's fib(28) under verify (AArch64, 5 s) that was
// 9 081 sleeps of the monitor, 285 preemption signals and 10 776 context
// switches; a yield at least every 5 ms (one Gosched, a few µs) brought
// them to 575, 9 and 3 335, and the CPU time down by about 5%. sframesim
// run of SQLite, which calls back at the program's system calls, saw the
// same (2 584 sleeps, 4 610 switches; then 375 and 975).
const yieldEvery = 5 * time.Millisecond

// yieldClock is the time yieldIfDue measures from.
var yieldClock = time.Now()

// yieldIfDue lets the scheduler run other goroutines, and this one again,
// when yieldEvery has passed since it last did: the goroutine then counts
// as rescheduled (see yieldEvery). It changes nothing the guest sees.
func (e *Engine) yieldIfDue() {
	if now := time.Since(yieldClock); now >= e.nextYield {
		e.nextYield = now + yieldEvery
		runtime.Gosched()
	}
}

// growTLB flushes Unicorn's TLB when its turn has come (see tlbFirst).
func (e *Engine) growTLB() error {
	g := &e.tlb
	n := uint64(e.st.count)
	if g.off || n-g.last < max(g.every, tlbFirst) {
		return nil
	}
	g.last = n
	g.flushes++
	switch {
	case g.every == 0:
		g.every = tlbFirst
	case g.flushes >= tlbQuick && g.every < tlbMaxEvery:
		g.every *= 2
	}
	if err := check(C.sfs_flush_tlb(e.uc)); err != nil {
		return fmt.Errorf("flushing the TLB: %w", err)
	}
	return nil
}

// Stop asks a running Start to return; it is meant for hooks. Called from
// an observer, the instruction being observed does not execute: Start
// returns with the PC at it. Use StopBefore there, which also keeps
// Executed exact.
func (e *Engine) Stop() error {
	e.stopReq = true
	if st := e.st; st != nil {
		st.stopping = 1
	}
	return check(C.uc_emu_stop(e.uc))
}

// StopBefore stops a running Start from an observer, before the observed
// instruction executes; Executed does not count it.
func (e *Engine) StopBefore() error {
	if e.st.count > 0 {
		e.st.count--
	}
	return e.Stop()
}

// Executed returns how many instructions have started executing.
func (e *Engine) Executed() uint64 { return uint64(e.st.count) }

// Fault describes the last invalid memory access.
type Fault struct {
	Kind  string // "read", "write", "fetch"
	Addr  uint64
	Size  int
	Value int64
	PC    uint64
}

// LastFault returns the invalid memory access that stopped the engine, if
// the last stop was one.
func (e *Engine) LastFault() (Fault, bool) {
	if e.st.fault_addr == 0 && e.st.fault_type == 0 {
		return Fault{}, false
	}
	kind := "read"
	switch e.st.fault_type {
	case C.UC_MEM_WRITE_UNMAPPED, C.UC_MEM_WRITE_PROT:
		kind = "write"
	case C.UC_MEM_FETCH_UNMAPPED, C.UC_MEM_FETCH_PROT:
		kind = "fetch"
	}
	f := Fault{Kind: kind, Addr: uint64(e.st.fault_addr), Size: int(e.st.fault_size), Value: int64(e.st.fault_value), PC: uint64(e.st.fault_pc)}
	if e.arch.Machine == elf.EM_X86_64 && f.Addr&^x86PhysMask == 0 {
		f.Addr = e.x86FaultAddr(kind, f.Addr, f.PC)
	}
	return f, true
}

// OnSyscall sets the function called for each x86-64 syscall instruction.
func (e *Engine) OnSyscall(fn func()) { e.onSyscall = fn }

// OnInterrupt sets the function called for each AArch64 exception (svc
// raises interrupt number 2) and each x86 CPU exception (by vector: 0
// for #DE, 3 for int3, N for int N); the function stops the engine (on
// x86 Unicorn would resume after the instruction).
func (e *Engine) OnInterrupt(fn func(intno uint32)) { e.onInterrupt = fn }

// OnPortIO sets the function called for each x86 in or out instruction
// (in reads 0); LastInsn says which.
func (e *Engine) OnPortIO(fn func()) { e.onPortIO = fn }

// LastInsn returns the address and size of the instruction that started
// executing last.
func (e *Engine) LastInsn() (pc uint64, size int) {
	if e.blocks && e.st.last_at != e.st.count {
		e.settleLast()
	}
	return uint64(e.st.last_pc), int(e.st.last_size)
}

// ObserveRecords has the C hook record every instruction (PC, size, SP,
// FP, LR before it runs) and calls fn with batches of up to n records: when
// the buffer is full and at FlushRecords. nil turns it off. The records
// describe registers only; memory is read by fn when it runs, after the
// whole batch executed.
func (e *Engine) ObserveRecords(n int, fn func([]Record)) {
	if fn != nil && e.blocks {
		e.CountBlocks(false)
	}
	e.onRecords, e.onHistory = fn, nil
	if fn != nil {
		e.allocRecords(n)
	} else {
		e.allocRecords(0)
	}
	e.setObserve()
}

// ObserveHistory has the C hooks record every instruction (as
// ObserveRecords) and, with n > 1, every guest store with the bytes it
// overwrote; fn is called for each instruction in order, in batches of up
// to n, with guest memory (as ReadMem, Read64 and the unwinder see it) put
// back to what that instruction saw. live is true when the engine's
// registers are still those of r: the last record of a batch, which the
// engine is about to run. Instructions in a live range (SetLiveRanges) are
// always live. With n = 1 every record is live and nothing is replayed.
// System calls and interrupts see the state after all records before them
// were passed to fn. nil turns it off.
func (e *Engine) ObserveHistory(n int, fn func(r *Record, live bool)) error {
	e.ObserveRecords(0, nil)
	if fn != nil && e.blocks {
		if err := e.CountBlocks(false); err != nil {
			return err
		}
	}
	e.onHistory, e.histN = fn, n
	if err := e.syncWriteHook(); err != nil {
		return err
	}
	if fn != nil {
		e.allocRecords(n)
	}
	e.setObserve()
	return nil
}

// SetLiveRanges names code ranges ([2i], [2i+1]) whose instructions
// ObserveHistory passes to Go live, before they run, one at a time: where
// an observer needs registers beyond those in a Record.
func (e *Engine) SetLiveRanges(ranges [][2]uint64) {
	C.free(unsafe.Pointer(e.st.live))
	e.st.live, e.st.nlive = nil, 0
	rs := append([][2]uint64(nil), ranges...)
	sort.Slice(rs, func(i, j int) bool { return rs[i][0] < rs[j][0] })
	var merged [][2]uint64
	for _, r := range rs {
		if r[1] <= r[0] {
			continue
		}
		if n := len(merged); n > 0 && r[0] <= merged[n-1][1] {
			merged[n-1][1] = max(merged[n-1][1], r[1])
			continue
		}
		merged = append(merged, r)
	}
	if len(merged) == 0 {
		return
	}
	e.st.live = (*C.uint64_t)(C.calloc(C.size_t(2*len(merged)), 8))
	l := unsafe.Slice(e.st.live, 2*len(merged))
	for i, r := range merged {
		l[2*i], l[2*i+1] = C.uint64_t(r[0]), C.uint64_t(r[1])
	}
	e.st.nlive = C.int32_t(len(merged))
}

// mergePCs is the capacity of the merge mode's address buffer: a batch
// ends when it is full.
const mergePCs = 1 << 16

// SetMerge turns merge mode on (bounds not nil) or off. In history mode
// with stores logged (ObserveHistory with n > 1), a record then stands for
// a run of instructions (Record.N) that an observer may treat as one: the
// instruction at its PC and those that ran after it with the same SP, FP
// and RA (the link register), each in an interval [bounds[i], bounds[i+1])
// whose class[i] is that of the first one's interval and not 0, never
// after a store into code, never at a live PC (SetLiveRanges), and on
// AArch64 never past a branch with link or to a register. So every
// instruction of a run saw the same registers the record has, and no call,
// return or indirect branch but maybe the last; the stores its
// instructions made are the run's stores (RunStores, RunAdvance). bounds
// must be sorted and distinct. RunPCs gives the run's addresses.
func (e *Engine) SetMerge(bounds []uint64, class []uint32) {
	C.free(unsafe.Pointer(e.st.bounds))
	C.free(unsafe.Pointer(e.st.cls))
	C.free(unsafe.Pointer(e.st.icache))
	e.SetExtend(nil, nil)
	e.st.bounds, e.st.cls, e.st.icache, e.st.nbounds = nil, nil, nil, 0
	e.st.run_lo, e.st.run_hi, e.st.run_cls, e.st.rec_cls = 0, 0, 0, 0
	if bounds == nil {
		e.st.merge = 0
		return
	}
	n := len(bounds)
	if n > 0 {
		e.st.bounds = (*C.uint64_t)(C.calloc(C.size_t(n), 8))
		e.st.cls = (*C.uint32_t)(C.calloc(C.size_t(n), 4))
		b, m := unsafe.Slice(e.st.bounds, n), unsafe.Slice(e.st.cls, n)
		for i, v := range bounds {
			b[i] = C.uint64_t(v)
			if i < len(class) {
				m[i] = C.uint32_t(class[i])
			}
		}
	}
	e.st.nbounds = C.int32_t(n)
	e.st.icache = (*C.struct_sfs_icache)(C.calloc(C.SFS_ICACHE, C.size_t(unsafe.Sizeof(C.struct_sfs_icache{}))))
	ic := unsafe.Slice(e.st.icache, C.SFS_ICACHE)
	for i := range ic {
		ic[i].i = -1 // empty
	}
	if e.st.pcs == nil {
		e.st.pcs = (*C.uint64_t)(C.calloc(mergePCs, 8))
		e.st.cappcs = mergePCs
	}
	e.st.merge = 1
}

// SetExtend lets merged runs (SetMerge, which it follows) also go on where
// SP, FP or the link register changed (recipes not nil): an instruction
// joins the run when the one before it was no call, return or branch to
// a register (arch.Arch.Classify's FlowOther) — or a branch to a register
// (FlowJump) with SP below the key's CFA — its interval i has a
// recipe (recipes[i].OK) and the fcls[i] (not 0) of the run's first
// instruction, and the recipe gives the Key the first instruction had —
// computed before each instruction from its registers and memory; the
// CFA must be at or above SP (above on x86-64, where SP at the CFA means
// the return address was popped). A store into a word a run's key read
// has the next instruction compute it again. So each instruction of such
// a run had frame 0 with the same return address, CFA and caller FP.
// RunExt says where the registers changed.
func (e *Engine) SetExtend(fcls []uint32, recipes []Recipe) {
	C.free(unsafe.Pointer(e.st.recipes))
	C.free(unsafe.Pointer(e.st.fcls))
	e.st.recipes, e.st.fcls, e.st.extend = nil, nil, 0
	n := int(e.st.nbounds)
	if recipes == nil || e.st.merge == 0 || len(recipes) != n || len(fcls) != n {
		return
	}
	e.st.recipes = (*C.sfs_recipe)(C.calloc(C.size_t(max(n, 1)), C.size_t(unsafe.Sizeof(C.sfs_recipe{}))))
	e.st.fcls = (*C.uint32_t)(C.calloc(C.size_t(max(n, 1)), 4))
	if e.st.ext == nil {
		// Kept (like pcs) while records may wait for the observer.
		e.st.ext = (*C.sfs_ext)(C.calloc(mergePCs, C.size_t(unsafe.Sizeof(C.sfs_ext{}))))
		if e.st.ext == nil {
			return
		}
		e.st.capext = mergePCs
	}
	rs, fs := unsafe.Slice(e.st.recipes, max(n, 1)), unsafe.Slice(e.st.fcls, max(n, 1))
	for i, r := range recipes {
		fs[i] = C.uint32_t(fcls[i])
		if !r.OK {
			continue
		}
		rs[i] = C.sfs_recipe{ra_mask: C.uint64_t(r.RAMask), cfa_off: C.int32_t(r.CFAOff), ra_off: C.int32_t(r.RAOff),
			fp_off: C.int32_t(r.FPOff), ok: 1, cfa_fp: cbool(r.CFAFromFP), ra_lr: cbool(r.RAFromLR), fp_same: cbool(r.FPSame)}
	}
	e.st.strict = C.int32_t(b2i(!e.arch.HasLinkRegister()))
	e.st.extend = 1
}

func cbool(b bool) C.uint8_t { return C.uint8_t(b2i(b)) }

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Extended returns how often runs went on with other registers
// (SetExtend) since the engine was made.
func (e *Engine) Extended() uint64 { return uint64(e.st.extended) }

// RunExt returns where the run r went on with other registers or into
// another merge interval (SetExtend: every change of interval is there),
// in order. Valid only while the observer handles r.
func (e *Engine) RunExt(r *Record) []Ext {
	if r.NExt == 0 || e.st.ext == nil || int(r.extIdx)+int(r.NExt) > int(e.st.next) {
		return nil
	}
	return unsafe.Slice((*Ext)(unsafe.Pointer(e.st.ext)), int(e.st.next))[r.extIdx : r.extIdx+r.NExt]
}

// RunPCs returns the addresses of the instructions r stands for, in the
// order they ran (merge mode; otherwise r.PC alone). Valid only while the
// observer handles r.
func (e *Engine) RunPCs(r *Record) []uint64 {
	if r.N <= 1 || e.st.pcs == nil || int(r.pcIdx)+int(r.N) > int(e.st.npcs) {
		return []uint64{r.PC}
	}
	return unsafe.Slice((*uint64)(unsafe.Pointer(e.st.pcs)), int(e.st.npcs))[r.pcIdx : r.pcIdx+r.N]
}

// RunStores calls fn with the address and size of each store that an
// instruction of the run r (the record the history observer is handling)
// made before its last one, in order, until fn returns true; it reports
// whether fn did. Those are the stores some instruction of the run saw
// made (the last one's are seen by the records after it).
func (e *Engine) RunStores(r *Record, fn func(addr, size uint64) bool) bool {
	if !e.replaying || r.N <= 1 {
		return false
	}
	for j := e.rj; j < len(e.rlog) && int(e.rlog[j].rec) == e.ri && e.rlog[j].member < C.uint32_t(r.N-1); j++ {
		if fn(uint64(e.rlog[j].addr), uint64(e.rlog[j].size)) {
			return true
		}
	}
	return false
}

// RunAdvance brings memory forward to what instruction k of the run r
// (RunPCs(r)[k], the history observer's record) saw: it redoes the stores
// the instructions before it made. The observer may advance k by k, never
// back; the rest of the run's stores are redone when it returns.
func (e *Engine) RunAdvance(r *Record, k int) {
	if !e.replaying {
		return
	}
	for ; e.rj < len(e.rlog) && int(e.rlog[e.rj].rec) == e.ri && int(e.rlog[e.rj].member) < k; e.rj++ {
		e.redo(&e.rlog[e.rj])
	}
}

// redo redoes a logged store the replay had undone.
func (e *Engine) redo(w *C.sfs_write) {
	swapBytes(w, e.rsaved)
	e.noteWrite(uint64(w.addr), uint64(w.size))
	if e.rcode && w.code != 0 {
		e.onCode(uint64(w.addr), uint64(w.size))
	}
}

// Live reports whether the engine's registers are those of the current
// state: always, except while ObserveHistory replays records that already
// ran (only the live record of a batch is current).
func (e *Engine) Live() bool { return !e.replaying || e.live }

// Watch arms a watch on guest memory [lo, hi): Touched then reports
// whether anything may have stored there since, and TouchedSpan where.
func (e *Engine) Watch(lo, hi uint64) {
	e.watchLo, e.watchHi, e.watchHit = lo, hi, false
	e.touchLo, e.touchHi, e.touchAll = ^uint64(0), 0, false
}

// Touched reports whether memory under the watch may have changed since
// Watch. Only history mode with its store hook sees guest stores (batched,
// the store log; one instruction at a time, the span stored to since the
// last); without it the answer is always yes.
func (e *Engine) Touched() bool { return e.watchHit || !e.seesStores() }

// seesStores reports whether the store hook notes where guest stores go.
func (e *Engine) seesStores() bool {
	return e.st.track == C.SFS_TRACK_LOG || e.st.track == C.SFS_TRACK_CODE
}

// TouchedSpan returns [lo, hi), where memory under the watch may have
// changed since Watch: the span of the stores there (lo >= hi: none), or
// all of memory (0, 2^64-1) where Touched cannot say more.
func (e *Engine) TouchedSpan() (lo, hi uint64) {
	switch {
	case e.touchAll || !e.seesStores():
		return 0, ^uint64(0)
	case !e.watchHit:
		return 0, 0
	}
	return e.touchLo, e.touchHi
}

// touchedAll notes that memory may have changed other than by a store.
func (e *Engine) touchedAll() { e.watchHit, e.touchAll = true, true }

func (e *Engine) noteWrite(addr, size uint64) {
	end := addr + size
	if end < addr {
		end = ^uint64(0)
	}
	if addr < e.watchHi && end > e.watchLo {
		e.watchHit = true
		e.touchLo, e.touchHi = min(e.touchLo, addr), max(e.touchHi, end)
	}
}

// FlushRecords passes the records not yet delivered to the observer.
func (e *Engine) FlushRecords() {
	e.classifyKeeps()
	n := int(e.st.nbuf)
	if n == 0 {
		return
	}
	switch {
	case e.onRecords != nil:
		e.st.nbuf = 0
		e.onRecords(e.records[:n])
	case e.onHistory != nil:
		e.replay(n, false)
		e.st.nbuf, e.st.nwlog, e.st.ncodew, e.st.nwbytes = 0, 0, 0, 0
		e.st.npcs, e.st.run_lo, e.st.run_hi, e.st.run_cls = 0, 0, 0, 0
		e.st.next, e.st.kdirty, e.st.kw = 0, 0, [2]C.uint64_t{}
	}
}

func (e *Engine) allocRecords(n int) {
	if e.st.buf != nil {
		C.free(unsafe.Pointer(e.st.buf))
		e.st.buf, e.st.cap, e.st.nbuf = nil, 0, 0
	}
	if n > 0 {
		e.st.buf = (*C.sfs_rec)(C.calloc(C.size_t(n), C.size_t(unsafe.Sizeof(C.sfs_rec{}))))
		e.st.cap = C.uint32_t(n)
		e.records = unsafe.Slice((*Record)(unsafe.Pointer(e.st.buf)), n)
	}
}

// replay passes the n pending records to the history observer, rolling
// memory back to before the first and forward again record by record.
func (e *Engine) replay(n int, live bool) {
	if e.st.dhi != 0 {
		e.noteWrite(uint64(e.st.dlo), uint64(e.st.dhi-e.st.dlo))
		e.st.dlo, e.st.dhi = 0, 0
	}
	if e.st.chi != 0 {
		// Code stores by instructions Go saw already: before all of these.
		lo, hi := uint64(e.st.clo), uint64(e.st.chi)
		e.st.clo, e.st.chi = 0, 0
		if e.onCode != nil {
			e.onCode(lo, hi-lo)
		}
	}
	e.rlog, e.rsaved = nil, nil
	e.rcode = e.st.ncodew > 0 && e.onCode != nil // a logged store may change code
	if e.st.track == C.SFS_TRACK_LOG && e.st.nwlog > 0 {
		e.rlog = unsafe.Slice(e.st.wlog, e.st.nwlog)
		e.rsaved = unsafe.Slice((*byte)(unsafe.Pointer(e.st.wbytes)), e.st.nwbytes)
		for k := len(e.rlog) - 1; k >= 0; k-- {
			swapBytes(&e.rlog[k], e.rsaved)
		}
	}
	e.rj = 0
	e.replaying = true
	defer func() { e.replaying, e.live, e.rlog, e.rsaved = false, false, nil, nil }()
	for i := range e.records[:n] {
		e.live = live && i == n-1
		e.ri = i
		e.onHistory(&e.records[i], e.live)
		for ; e.rj < len(e.rlog) && int(e.rlog[e.rj].rec) <= i; e.rj++ {
			e.redo(&e.rlog[e.rj])
		}
	}
	for ; e.rj < len(e.rlog); e.rj++ {
		swapBytes(&e.rlog[e.rj], e.rsaved)
		if e.rcode && e.rlog[e.rj].code != 0 {
			e.onCode(uint64(e.rlog[e.rj].addr), uint64(e.rlog[e.rj].size))
		}
	}
}

// keepQueue is the capacity of the queue of instructions the C hook asks
// Go to classify (arch.KeepsFrame).
const keepQueue = 4096

// classifyKeeps tells the C hook, for each instruction it queued, whether
// it leaves the stack pointer, frame pointer and link register alone
// (arch.Arch.KeepsFrame), so that the registers read before it serve for
// the next instruction too, or what it does to them (arch.Arch.
// StackEffect, FrameMove), so that the hook computes them. Code in
// writable memory may change: never.
func (e *Engine) classifyKeeps() {
	n := int(e.st.nkq)
	if n == 0 {
		return
	}
	var code [16]byte
	for _, pc := range unsafe.Slice((*uint64)(unsafe.Pointer(e.st.kq)), n) {
		v := C.uint8_t(2)
		if n, err := e.ReadCode(pc, code[:]); err == nil && !e.hasProt(pc, uint64(n), ProtWrite) {
			f := e.arch.Facts(code[:n]) // KeepsFrame, Classify, StackEffect
			if f.Keeps {
				v = 1
			}
			switch f.Flow {
			case arch.FlowOther:
				v |= C.SFS_FLOW_OTHER
			case arch.FlowJump:
				v |= C.SFS_FLOW_JUMP
			}
			switch sp, link := f.SP, f.Link; {
			case !f.Effect:
			case link && sp == 0:
				v |= C.SFS_EFFECT_LINK
			case !link && sp == 0:
				v |= C.SFS_EFFECT_NONE
			case !link && sp == -8:
				v |= C.SFS_EFFECT_SP_DOWN8
			case !link && sp == 8:
				v |= C.SFS_EFFECT_SP_UP8
			}
			if m := f.Move; f.Moves && fits32(m.SP, m.FPOff, m.LROff) &&
				C.sfs_move_set(e.st, C.uint64_t(pc), C.int32_t(m.SP), C.uint8_t(boolInt(m.FromFP)), C.uint8_t(m.FP), C.int32_t(m.FPOff), C.uint8_t(m.LR), C.int32_t(m.LROff)) != 0 {
				v |= C.SFS_EFFECT_MOVE
			}
		}
		C.sfs_keep_set(e.st, C.uint64_t(pc), v)
	}
	e.st.nkq = 0
}

// The hook reads an arch.MoveRule as its SFS_MOVE_* (an index out of
// range here does not compile).
var (
	_ = [1]struct{}{}[int(arch.MoveKeep)-C.SFS_MOVE_KEEP]
	_ = [1]struct{}{}[int(arch.MoveSet)-C.SFS_MOVE_SET]
	_ = [1]struct{}{}[int(arch.MoveLoad)-C.SFS_MOVE_LOAD]
)

// fits32 reports whether every value fits an int32.
func fits32(vs ...int64) bool {
	for _, v := range vs {
		if v != int64(int32(v)) {
			return false
		}
	}
	return true
}

// ReadCode reads up to len(buf) bytes of code at pc into buf, fewer at the
// end of a mapping, and returns how many.
func (e *Engine) ReadCode(pc uint64, buf []byte) (int, error) {
	for n := len(buf); n > 0; n-- {
		if e.ReadMem(pc, buf[:n]) == nil {
			return n, nil
		}
	}
	return 0, fmt.Errorf("no code at %#x", pc)
}

// CheckKeptRegisters has the C hook read the frame registers even where it
// would keep those of the instruction before (a test of arch.KeepsFrame);
// KeptRegisters reports how often it kept them and, while checking, how
// often they were wrong.
func (e *Engine) CheckKeptRegisters(on bool) {
	e.st.kcheck = 0
	if on {
		e.st.kcheck = 1
	}
}

// MovedRegisters reports how many of the KeptRegisters were computed
// after an arch.Arch.FrameMove.
func (e *Engine) MovedRegisters() uint64 { return uint64(e.st.kmoved) }

// KeptRegisters: see CheckKeptRegisters.
func (e *Engine) KeptRegisters() (kept, wrong uint64) {
	return uint64(e.st.kkept), uint64(e.st.kmiss)
}

// swapBytes exchanges a store's target bytes with its saved copy: undoing
// it the first time, redoing it the second.
func swapBytes(w *C.sfs_write, saved []byte) {
	s := saved[w.off : w.off+C.uint64_t(w.size)]
	if w.size == 8 {
		// Most stores are of a word: one exchange, no loop (the replay
		// of SQLite's run swaps tens of millions).
		a, b := (*[8]byte)(unsafe.Pointer(w.host)), (*[8]byte)(s)
		*a, *b = *b, *a
		return
	}
	exchange(unsafe.Slice((*byte)(unsafe.Pointer(w.host)), int(w.size)), s)
}

func (e *Engine) setObserve() {
	switch {
	case e.onRecords != nil, e.onHistory != nil:
		e.st.observe = C.SFS_OBSERVE_RECORD
		if e.st.kq == nil {
			e.st.kq = (*C.uint64_t)(C.calloc(keepQueue, 8))
			if e.st.kq != nil {
				e.st.capkq = keepQueue
			}
		}
	default:
		e.st.observe = C.SFS_OBSERVE_NONE
	}
}

func lookupEngine(slot C.int32_t) *Engine { return engines[slot].Load() }

//export sfsGoFlush
func sfsGoFlush(slot C.int32_t, live C.int) {
	e := lookupEngine(slot)
	e.classifyKeeps()
	n := int(e.st.nbuf)
	switch {
	case e.onRecords != nil:
		e.onRecords(e.records[:n])
	case e.onHistory != nil:
		e.replay(n, live != 0)
	}
	e.yieldIfDue()
}

//export sfsGoSyscall
func sfsGoSyscall(slot C.int32_t) {
	e := lookupEngine(slot)
	e.settle()
	if e.onSyscall != nil {
		e.onSyscall()
	}
	e.yieldIfDue()
}

//export sfsGoPortIO
func sfsGoPortIO(slot C.int32_t) {
	e := lookupEngine(slot)
	e.settle()
	if e.onPortIO != nil {
		e.onPortIO()
	}
}

//export sfsGoInterrupt
func sfsGoInterrupt(slot C.int32_t, intno C.uint32_t) {
	e := lookupEngine(slot)
	e.settle()
	if e.onInterrupt != nil {
		e.onInterrupt(uint32(intno))
	}
}

// SysReg names an AArch64 system register by its encoding.
type SysReg struct{ Op0, Op1, CRn, CRm, Op2 uint32 }

// AArch64 system registers the Linux layer sets up.
var (
	SysRegSCTLR_EL1 = SysReg{3, 0, 1, 0, 0}
	SysRegTPIDR_EL0 = SysReg{3, 3, 13, 0, 2}
	SysRegHCR_EL2   = SysReg{3, 4, 1, 1, 0}
	SysRegSCR_EL3   = SysReg{3, 6, 1, 1, 0}
)

// enablePAuth makes pointer authentication work as Linux user space sees
// it. Unicorn's "max" CPU has FEAT_PAuth but starts with the instruction
// keys disabled (SCTLR_EL1.EnIA/EnIB clear), so paciasp would be a NOP; and
// with them enabled, PAC instructions trap to EL2/EL3 unless SCR_EL3.API and
// HCR_EL2.API are set (the emulated core also runs the secure state, where
// QEMU 5's HCR_EL2 view reads as 0, hence NS). The keys stay zero, which
// still gives real, non-trivial signatures.
func (e *Engine) enablePAuth() error {
	const (
		scrNS, scrRW, scrAPK, scrAPI = 1 << 0, 1 << 10, 1 << 16, 1 << 17
		hcrRW, hcrAPK, hcrAPI        = 1 << 31, 1 << 40, 1 << 41
		sctlrEnIB, sctlrEnIA         = 1 << 30, 1 << 31
		sctlrEnDB, sctlrEnDA         = 1 << 13, 1 << 27
	)
	for _, w := range []struct {
		r    SysReg
		bits uint64
	}{
		{SysRegSCR_EL3, scrNS | scrRW | scrAPK | scrAPI},
		{SysRegHCR_EL2, hcrRW | hcrAPK | hcrAPI},
		{SysRegSCTLR_EL1, sctlrEnIA | sctlrEnIB | sctlrEnDA | sctlrEnDB},
	} {
		v, err := e.ReadSysReg(w.r)
		if err != nil {
			return err
		}
		if err := e.WriteSysReg(w.r, v|w.bits); err != nil {
			return err
		}
	}
	return nil
}

// ReadSysReg reads an AArch64 system register.
func (e *Engine) ReadSysReg(r SysReg) (uint64, error) {
	var v C.uint64_t
	if err := check(C.sfs_arm64_sysreg(e.uc, 0, C.uint32_t(r.Op0), C.uint32_t(r.Op1), C.uint32_t(r.CRn), C.uint32_t(r.CRm), C.uint32_t(r.Op2), &v)); err != nil {
		return 0, fmt.Errorf("reading system register %v: %w", r, err)
	}
	return uint64(v), nil
}

// WriteSysReg writes an AArch64 system register.
func (e *Engine) WriteSysReg(r SysReg, val uint64) error {
	v := C.uint64_t(val)
	if err := check(C.sfs_arm64_sysreg(e.uc, 1, C.uint32_t(r.Op0), C.uint32_t(r.Op1), C.uint32_t(r.CRn), C.uint32_t(r.CRm), C.uint32_t(r.Op2), &v)); err != nil {
		return fmt.Errorf("writing system register %v: %w", r, err)
	}
	return nil
}

// RemoveCodeHook removes the per-instruction C hook, leaving Unicorn to run
// without any: the speed baseline of BenchmarkEmulation. Executed no longer
// counts and observers no longer run; there is no way back.
func (e *Engine) RemoveCodeHook() error { return check(C.sfs_code_hook_del(e.st)) }
