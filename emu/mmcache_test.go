//go:build cgo

package emu

import (
	"errors"
	"testing"

	"github.com/sframesim/sframesim/arch"
)

// TestRegionsCached checks that engines of both architectures look
// regions up through mmcache.c's cache with the libunicorn they are built
// with (without it, every guest load and store under verify walks
// Unicorn's address-space tree). A libunicorn that does not export its
// lookup (a shared one may not) cannot have it cached: skipped, saying so.
func TestRegionsCached(t *testing.T) {
	for _, a := range []*arch.Arch{arch.AMD64, arch.ARM64} {
		if !regionLookupExported(a) {
			t.Skipf("libunicorn %s does not export find_memory_mapping for %s: region lookups are not cached (verify is ~10%% slower)", Version(), a.Name)
		}
		e, err := NewEngine(a)
		if err != nil {
			t.Fatal(err)
		}
		if !e.RegionsCached() {
			t.Errorf("%s: the engine's region lookups are not cached (libunicorn %s laid out otherwise?)", a.Name, Version())
		}
		e.Close()
	}
}

// TestRegionCacheFollowsChanges runs a load and a store on a page again
// and again, with a write hook (every access asks for the page's region),
// while the page is mapped, then the protection of that page alone changes
// between the runs (which splits Unicorn's region of the mapping): each run
// must see the memory of its time, not the region (or none) it was looked
// up in before.
func TestRegionCacheFollowsChanges(t *testing.T) {
	e, err := NewEngine(arch.AMD64)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if !e.RegionsCached() {
		t.Fatal("the engine's region lookups are not cached")
	}
	// mov eax, [0x501010]; mov dword [0x501010], 7; hlt
	code := []byte{0x8b, 0x04, 0x25, 0x10, 0x10, 0x50, 0x00, 0xc7, 0x04, 0x25, 0x10, 0x10, 0x50, 0x00, 0x07, 0x00, 0x00, 0x00, 0xf4}
	text, err := e.Map(0x400000, PageSize, ProtRead|ProtExec, "text")
	if err != nil {
		t.Fatal(err)
	}
	copy(text, code)
	if err := e.ObserveHistory(64, func(*Record, bool) {}); err != nil {
		t.Fatal(err)
	}
	end := uint64(0x400000 + len(code) - 1)
	// Not mapped yet, then mapped.
	if err := e.Start(0x400000, end, 0, 0); !errors.Is(err, ErrReadUnmapped) {
		t.Errorf("run before the page is mapped: %v, want %v", err, ErrReadUnmapped)
	}
	e.FlushRecords()
	if _, err := e.Map(0x500000, 4*PageSize, ProtRead|ProtWrite, "data"); err != nil {
		t.Fatal(err)
	}
	for i, c := range []struct {
		prot Prot
		want error
	}{
		{ProtRead | ProtWrite, nil},
		{ProtRead, ErrWriteProt},
		{ProtRead | ProtWrite, nil},
		{0, ErrReadProt},
		{ProtRead | ProtWrite, nil},
		{ProtRead, ErrWriteProt},
		{0, ErrReadProt},
		{ProtRead | ProtWrite, nil},
	} {
		if err := e.Protect(0x501000, PageSize, c.prot); err != nil {
			t.Fatal(err)
		}
		err := e.Start(0x400000, end, 0, 0)
		e.FlushRecords()
		if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("run %d with %s: %v, want %v", i, c.prot, err, c.want)
		}
	}
}
