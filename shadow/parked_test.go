package shadow

import (
	"reflect"
	"testing"

	"github.com/sframesim/sframesim/arch"
)

// TestSaveRestoreParked: a checkpoint holds the call stacks a context
// switch parked and the frames dropped last, copies of them: what happens
// after Save changes neither, and Restore brings them back.
func TestSaveRestoreParked(t *testing.T) {
	s := New(arch.AMD64, nil)
	s.frames = []Frame{{ReturnAddr: 0x1005, CFA: 0x8000}, {ReturnAddr: 0x2005, CFA: 0x7f00}}
	s.park()
	s.frames = []Frame{{ReturnAddr: 0x5000, CFA: 0x4000}}
	s.dropped, s.droppedAt = []Frame{{ReturnAddr: 0x3005, CFA: 0x3f00}}, 7
	saved := s.Save()
	wantParked := []segment{{frames: []Frame{{ReturnAddr: 0x1005, CFA: 0x8000}, {ReturnAddr: 0x2005, CFA: 0x7f00}}}}
	wantDropped := []Frame{{ReturnAddr: 0x3005, CFA: 0x3f00}}

	s.parked[0].frames[1].CFA = 0x1234 // changes after Save
	s.park()
	s.dropped[0].CFA, s.droppedAt = 0x1111, 9
	s.Restore(saved)
	if !reflect.DeepEqual(s.parked, wantParked) || !reflect.DeepEqual(s.dropped, wantDropped) || s.droppedAt != 7 {
		t.Fatalf("restored parked %+v, dropped %+v at %d; want %+v, %+v at 7", s.parked, s.dropped, s.droppedAt, wantParked, wantDropped)
	}
	// Restored twice from one checkpoint: the first run's changes stay
	// out of it.
	s.parked[0].frames[0].CFA = 0x4321
	s.Restore(saved)
	if !reflect.DeepEqual(s.parked, wantParked) {
		t.Fatalf("restored again: parked %+v, want %+v", s.parked, wantParked)
	}
}

// TestAnomaliesBounded: a stack keeps the first maxAnomalies anomalies in
// full and counts the rest by kind, with each kind's first, making the
// detail text only for those it keeps (a program may make millions: a
// retpoline's every call, a coroutine's every switch); a checkpoint holds
// the counts.
func TestAnomaliesBounded(t *testing.T) {
	s := New(arch.AMD64, nil)
	made := 0
	detail := func() string { made++; return "detail" }
	for i := range 1000 {
		s.insn = uint64(i)
		s.anomaly("unexpected-return", 0x1000, detail)
	}
	saved := s.Save()
	s.insn = 5000
	s.anomaly("context-switch", 0x2000, detail)
	s.anomaly("context-switch", 0x2000, detail)
	want := []AnomalyKind{
		{First: Anomaly{Insn: 0, PC: 0x1000, Kind: "unexpected-return", Detail: "detail"}, Count: 1000},
		{First: Anomaly{Insn: 5000, PC: 0x2000, Kind: "context-switch", Detail: "detail"}, Count: 2},
	}
	if len(s.Anomalies()) != maxAnomalies || !reflect.DeepEqual(s.AnomalyKinds(), want) || made != maxAnomalies+1 {
		t.Fatalf("%d kept, kinds %+v, %d details made; want %d, %+v, %d", len(s.Anomalies()), s.AnomalyKinds(), made, maxAnomalies, want, maxAnomalies+1)
	}
	s.Restore(saved)
	if !reflect.DeepEqual(s.AnomalyKinds(), want[:1]) || len(s.Anomalies()) != maxAnomalies {
		t.Fatalf("restored: kinds %+v, %d kept; want %+v, %d", s.AnomalyKinds(), len(s.Anomalies()), want[:1], maxAnomalies)
	}
}

// TestParkedBounded: at most maxParked call stacks stay parked, and at
// most maxParkedFrames frames in them, the oldest forgotten first.
func TestParkedBounded(t *testing.T) {
	s := New(arch.AMD64, nil)
	for i := range maxParked + 10 {
		s.frames = []Frame{{CFA: uint64(i+1) << 20}}
		s.park()
	}
	if len(s.parked) != maxParked || s.parked[0].frames[0].CFA != 11<<20 {
		t.Fatalf("%d parked, the oldest at %#x; want %d, from %#x", len(s.parked), s.parked[0].frames[0].CFA, maxParked, 11<<20)
	}
	s.parked, s.parkedFrames = nil, 0
	deep := make([]Frame, maxParkedFrames/3)
	for i := range 5 {
		s.frames = append([]Frame(nil), deep...)
		s.frames[0].CFA = uint64(i+1) << 32
		s.park()
	}
	n := 0
	for _, seg := range s.parked {
		n += len(seg.frames)
	}
	if n > maxParkedFrames || len(s.parked) != 3 || s.parked[0].frames[0].CFA != 3<<32 {
		t.Fatalf("%d frames in %d parked stacks, the oldest at %#x; want at most %d in 3, from %#x", n, len(s.parked), s.parked[0].frames[0].CFA, maxParkedFrames, uint64(3)<<32)
	}
}

// TestResumeLookupCheap: with thousands of call stacks parked, a landing
// no parked frame could resume (every AArch64 br of an interpreter's
// dispatch) costs no pass over them: a program with 4 000 coroutines
// and a million br took 18 s, now 0.3 s. A landing one could resume
// finds it.
func TestResumeLookupCheap(t *testing.T) {
	s := New(arch.ARM64, nil)
	for i := range 4000 {
		base := uint64(i+1) << 20
		s.frames = []Frame{{ReturnAddr: 0x9000, CFA: base}, {ReturnAddr: 0x4000 + uint64(i), CFA: base - 64}}
		s.park()
	}
	for i := range 100000 {
		r := Record{PC: 0x1000 + uint64(i%7)*4, SP: 0x7fff0000}
		if k := s.resumable(&r); k >= 0 {
			t.Fatalf("landing at %#x resumes %d", r.PC, k)
		}
	}
	if s.resumeScans != 0 {
		t.Fatalf("%d passes over the parked call stacks for landings none could resume", s.resumeScans)
	}
	r := Record{PC: 0x4000 + 1234, SP: 1235<<20 - 64}
	k := s.resumable(&r)
	if k < 0 || s.parked[k].frames[1].ReturnAddr != r.PC {
		t.Fatalf("the landing where call stack 1234's top frame returns resumes %d", k)
	}
}
