//go:build integration

package afsock

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/pseudocong/pseudocong/internal/testenv"
)

// vethPair creates a veth pair in the root namespace, both ends up, IPv6
// off so the kernel sends nothing of its own.
func vethPair(t *testing.T) (a, b string) {
	t.Helper()
	testenv.RequireRoot(t)
	tag := testenv.NewTag()
	a, b = tag+"a", tag+"b"
	if err := netlink.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: a}, PeerName: b}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if l, err := netlink.LinkByName(a); err == nil {
			_ = netlink.LinkDel(l)
		}
	})
	for _, n := range []string{a, b} {
		l, err := netlink.LinkByName(n)
		if err != nil {
			t.Fatal(err)
		}
		if err := netlink.LinkSetUp(l); err != nil {
			t.Fatal(err)
		}
	}
	return a, b
}

type collector struct {
	mu     sync.Mutex
	frames [][]byte
}

func (c *collector) handle(f []byte, _ time.Time) {
	c.mu.Lock()
	c.frames = append(c.frames, f)
	c.mu.Unlock()
}

func (c *collector) count(want []byte) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, f := range c.frames {
		if bytes.Equal(f, want) {
			n++
		}
	}
	return n
}

// A frame written on one end arrives exactly once at the other and never
// comes back to the writer's own socket, with either ring version; Close
// stops Run and later writes fail with ErrClosed.
func TestWriteReadAndOwnFramesIgnored(t *testing.T) {
	for _, version := range []int{2, 3} {
		t.Run(fmt.Sprintf("v%d", version), func(t *testing.T) {
			a, b := vethPair(t)
			sa, err := Open(Options{IfName: a, Version: version})
			if err != nil {
				t.Fatal(err)
			}
			sb, err := Open(Options{IfName: b, Version: version, Promiscuous: true})
			if err != nil {
				t.Fatal(err)
			}
			var ca, cb collector
			runErr := make(chan error, 2)
			go func() { runErr <- sa.Run(ca.handle) }()
			go func() { runErr <- sb.Run(cb.handle) }()

			// An Ethernet frame with a local experimental EtherType, for
			// nobody in particular (sb is promiscuous).
			frame := append([]byte{0x02, 0, 0, 0, 0, 0x99}, sa.HWAddr()...)
			frame = append(frame, 0x88, 0xb5)
			frame = append(frame, bytes.Repeat([]byte{0xab}, 46)...)
			if err := sa.Write(frame); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(3 * time.Second)
			for cb.count(frame) == 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			time.Sleep(100 * time.Millisecond) // room for a duplicate or an echo
			if n := cb.count(frame); n != 1 {
				t.Errorf("peer received the frame %d times, want 1", n)
			}
			if n := ca.count(frame); n != 0 {
				t.Errorf("writer's own socket received its frame %d times", n)
			}
			if st := sa.Stats(); st.TxFrames != 1 || st.TxErrors != 0 {
				t.Errorf("writer stats %+v", st)
			}

			start := time.Now()
			for _, s := range []*Socket{sa, sb} {
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
			}
			for range 2 {
				if err := <-runErr; err != nil {
					t.Errorf("Run: %v", err)
				}
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("Close took %v", d)
			}
			if err := sa.Write(frame); !errors.Is(err, ErrClosed) {
				t.Errorf("write after close: %v, want ErrClosed", err)
			}
		})
	}
}
