package netsim

import "testing"

type poolPkt struct {
	p   Packet
	tag int
}

// The pool reuses last-in first-out, makes a descriptor only when empty,
// runs New for each one it makes, and a warm Get/Put cycle allocates
// nothing.
func TestPool(t *testing.T) {
	made := 0
	pool := Pool[poolPkt]{New: func() *poolPkt {
		made++
		w := &poolPkt{tag: made}
		w.p.Meta = w
		return w
	}}
	a, b := pool.Get(), pool.Get()
	if a == b || a.tag != 1 || b.tag != 2 || a.p.Meta != a {
		t.Fatalf("two fresh descriptors: %+v %+v", a, b)
	}
	pool.Put(a)
	pool.Put(b)
	if pool.Free() != 2 || pool.Made() != 2 {
		t.Fatalf("free %d made %d, want 2 and 2", pool.Free(), pool.Made())
	}
	if got := pool.Get(); got != b {
		t.Fatalf("Get after Put(a), Put(b) = tag %d, want b (LIFO)", got.tag)
	}
	if got := pool.Get(); got != a {
		t.Fatalf("second Get = tag %d, want a", got.tag)
	}
	if pool.Get().tag != 3 || made != 3 {
		t.Fatalf("an empty pool did not make a new descriptor (made %d)", made)
	}
	if allocs := testing.AllocsPerRun(100, func() { pool.Put(pool.Get()) }); allocs != 0 {
		t.Errorf("a warm Get/Put allocates %.1f times", allocs)
	}
	var plain Pool[Packet] // no New: new(T)
	if p := plain.Get(); p == nil || plain.Made() != 1 {
		t.Fatal("a Pool without New made nothing")
	}
}
