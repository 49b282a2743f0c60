package highbdp

import (
	"reflect"
	"testing"
	"unsafe"

	"github.com/pseudocong/pseudocong/tcp"
)

// wireSeg keeps every field of tcp.Segment but MP: a field added to
// tcp.Segment and not here fails the first check, one here that put or
// get forgets fails the round trip.
func TestWireSegRoundTrip(t *testing.T) {
	st, wt := reflect.TypeFor[tcp.Segment](), reflect.TypeFor[wireSeg]()
	for i := range st.NumField() {
		f := st.Field(i)
		if f.Name == "MP" {
			continue
		}
		g, ok := wt.FieldByName(f.Name)
		if !ok || g.Type.Kind() != f.Type.Kind() && !(g.Type.ConvertibleTo(f.Type) && f.Type.ConvertibleTo(g.Type)) {
			t.Errorf("tcp.Segment.%s (%v): wireSeg has no such field", f.Name, f.Type)
		}
	}
	if wt.NumField() != st.NumField()-1 {
		t.Errorf("wireSeg has %d fields, tcp.Segment %d besides MP", wt.NumField(), st.NumField()-1)
	}
	// Two cache lines a descriptor (wireseg.go).
	if n := unsafe.Sizeof(pkt{}); n != 128 {
		t.Errorf("pkt is %d bytes, want 128", n)
	}
	// Every field set to a value of its own, through a descriptor and back.
	var s tcp.Segment
	v := reflect.ValueOf(&s).Elem()
	for i := range v.NumField() {
		if st.Field(i).Name == "MP" {
			continue
		}
		setDistinct(v.Field(i), uint64(i+1))
	}
	s.NumSACK = 3
	var w wireSeg
	w.put(&s)
	var back tcp.Segment
	w.get(&back)
	if !reflect.DeepEqual(back, s) {
		t.Errorf("round trip:\n got %+v\nwant %+v", back, s)
	}
	// Without SACK blocks, get leaves the previous ones (Conn reads only
	// the first NumSACK).
	s.NumSACK = 0
	s.SACK = [4]tcp.SACKBlock{}
	w.put(&s)
	w.get(&back)
	if back.NumSACK != 0 || back.Seq != s.Seq {
		t.Errorf("without SACK: got %+v", back)
	}
}

// setDistinct sets every scalar in v to a nonzero value derived from k.
func setDistinct(v reflect.Value, k uint64) {
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(k%100 + 1))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(k%200 + 1)
	case reflect.Array:
		for i := range v.Len() {
			setDistinct(v.Index(i), k*7+uint64(i))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			setDistinct(v.Field(i), k*13+uint64(i))
		}
	default:
		panic("setDistinct: " + v.Kind().String())
	}
}
