//go:build cgo

package emu

// SetCacheRegions says whether engines made from now on cache their
// region lookups, and returns the previous setting.
func SetCacheRegions(on bool) bool { return cacheRegions.Swap(on) }

// SetCodeBufferFull sets where the translation buffers of engines made
// from now on count as full, and returns the previous setting.
func SetCodeBufferFull(n uintptr) uintptr {
	old := codeFull
	codeFull = n
	return old
}
