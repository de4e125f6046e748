//go:build cgo

package emu

// SetCacheRegions says whether engines made from now on cache their
// region lookups, and returns the previous setting.
func SetCacheRegions(on bool) bool { return cacheRegions.Swap(on) }
