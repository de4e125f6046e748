package shadow

import (
	"reflect"
	"testing"
)

// TestSetPrev: setPrev copies every field of a Record (it copies them one
// by one, so a field added to Record must be added there too).
func TestSetPrev(t *testing.T) {
	var r Record
	v := reflect.ValueOf(&r).Elem()
	for i := range v.NumField() {
		if f := v.Field(i); f.Kind() == reflect.Bool {
			f.SetBool(true)
		} else {
			f.SetUint(uint64(0x1000 + i))
		}
	}
	var s Stack
	s.setPrev(&r)
	if s.prev != r {
		t.Errorf("setPrev(%+v) left %+v", r, s.prev)
	}
}
