//go:build cgo

package emu

// A CPUContext is the CPU registers of the engine at one point, all of
// them (thread pointer included: x86-64's FS and GS bases, AArch64's
// TPIDR_EL0), without memory or the instruction count: what a context
// switch between guest threads saves and restores. It is never changed
// once taken, so it may be shared.
type CPUContext struct{ blob []byte }

// SaveCPU returns the engine's CPU registers. It must be called between
// runs, not from a hook.
func (e *Engine) SaveCPU() (*CPUContext, error) {
	b, err := e.saveContext()
	if err != nil {
		return nil, err
	}
	return &CPUContext{blob: b}, nil
}

// RestoreCPU loads CPU registers SaveCPU returned (of this engine).
// Memory and the instruction count stay as they are.
func (e *Engine) RestoreCPU(c *CPUContext) error { return e.restoreContext(c.blob) }
