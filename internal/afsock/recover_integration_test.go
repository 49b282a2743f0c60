//go:build integration

package afsock

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
)

// recoverDeadline bounds every wait for the socket to come back. It is
// generous on purpose: the fix brings a port back within milliseconds of
// link up, but a loaded 2-core CI machine can stall a goroutine for
// seconds; the time actually taken is logged.
const recoverDeadline = 10 * time.Second

// probeFrame is a frame with a local experimental EtherType and a
// sequence number, so each probe can be told apart from earlier ones.
func probeFrame(src []byte, seq uint32) []byte {
	f := append([]byte{0x02, 0, 0, 0, 0, 0x99}, src...)
	f = append(f, 0x88, 0xb5)
	f = binary.BigEndian.AppendUint32(f, seq)
	return append(f, bytes.Repeat([]byte{0xcd}, 42)...)
}

// waitDelivery writes fresh probes from sender every 20 ms until one
// arrives at c, and returns how long that took.
func waitDelivery(t *testing.T, sender func() *Socket, c *collector, seq *atomic.Uint32) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		s := sender()
		f := probeFrame(s.HWAddr(), seq.Add(1))
		_ = s.Write(f) // fails while the link is still coming up
		tick := time.Now().Add(20 * time.Millisecond)
		for time.Now().Before(tick) {
			if c.count(f) > 0 {
				return time.Since(start)
			}
			time.Sleep(2 * time.Millisecond)
		}
		if time.Since(start) > recoverDeadline {
			t.Fatalf("no frame received within %v", recoverDeadline)
		}
	}
}

func setLink(t *testing.T, name string, up bool) {
	t.Helper()
	l, err := netlink.LinkByName(name)
	if err != nil {
		t.Fatal(err)
	}
	if up {
		err = netlink.LinkSetUp(l)
	} else {
		err = netlink.LinkSetDown(l)
	}
	if err != nil {
		t.Fatalf("set %s up=%v: %v", name, up, err)
	}
}

// startRun runs s.Run in the background; the returned channel gets its
// result. A Run that returns before Close is the defect under test.
func startRun(t *testing.T, s *Socket, h Handler) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- s.Run(h) }()
	t.Cleanup(func() { _ = s.Close(); <-done })
	return done
}

func requireRunning(t *testing.T, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		t.Fatalf("Run returned before Close: %v", err)
	default:
	}
}

// Regression: the socket's own interface going down and up made poll
// report POLLERR (the kernel sets ENETDOWN on the socket) and Run
// returned "read: packet poll failed" for good. Now it waits for the link,
// rebinds and delivers again.
func TestRunSurvivesLinkDownUp(t *testing.T) {
	for _, version := range []int{2, 3} {
		t.Run(fmt.Sprintf("v%d", version), func(t *testing.T) {
			a, b := vethPair(t)
			sa, err := Open(Options{IfName: a, Version: version, Promiscuous: true})
			if err != nil {
				t.Fatal(err)
			}
			sb, err := Open(Options{IfName: b, Version: version})
			if err != nil {
				t.Fatal(err)
			}
			var ca, cb collector
			done := startRun(t, sa, ca.handle)
			startRun(t, sb, cb.handle)
			var seq atomic.Uint32
			waitDelivery(t, func() *Socket { return sb }, &ca, &seq)

			for round := 1; round <= 2; round++ {
				setLink(t, a, false)
				waitUnbound(t, sa)
				if err := sa.Write(probeFrame(sa.HWAddr(), 0)); !errors.Is(err, ErrUnbound) {
					t.Errorf("write while down: %v, want ErrUnbound", err)
				}
				checkBackoff(t, sa)
				setLink(t, a, true)
				if round == 2 {
					// What a caller that watches netlink does (afport):
					// no waiting for the back-off.
					sa.Wake()
				}
				d := waitDelivery(t, func() *Socket { return sb }, &ca, &seq)
				t.Logf("round %d (wake %v): first frame %v after link up", round, round == 2, d)
				requireRunning(t, done)
				if st := sa.Stats(); st.Rebinds != uint64(round) {
					t.Errorf("after %d outages: %d rebinds", round, st.Rebinds)
				}
			}
		})
	}
}

// Regression: deleting the interface and creating a new one with the same
// name left the socket bound to the old, dead ifindex. Now it re-resolves
// the name and binds to the new interface.
func TestRunSurvivesInterfaceRecreate(t *testing.T) {
	for _, version := range []int{2, 3} {
		t.Run(fmt.Sprintf("v%d", version), func(t *testing.T) {
			a, b := vethPair(t)
			sa, err := Open(Options{IfName: a, Version: version, Promiscuous: true})
			if err != nil {
				t.Fatal(err)
			}
			oldIndex := sa.Index()
			var ca collector
			done := startRun(t, sa, ca.handle)

			l, err := netlink.LinkByName(a)
			if err != nil {
				t.Fatal(err)
			}
			if err := netlink.LinkDel(l); err != nil { // takes b with it
				t.Fatal(err)
			}
			waitUnbound(t, sa)
			checkBackoff(t, sa)
			if err := netlink.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: a}, PeerName: b}); err != nil {
				t.Fatal(err)
			}
			setLink(t, a, true)
			setLink(t, b, true)
			sb, err := Open(Options{IfName: b, Version: version})
			if err != nil {
				t.Fatal(err)
			}
			var cb collector
			startRun(t, sb, cb.handle)
			var seq atomic.Uint32
			d := waitDelivery(t, func() *Socket { return sb }, &ca, &seq)
			t.Logf("first frame %v after the new interface came up", d)
			requireRunning(t, done)
			nl, err := netlink.LinkByName(a)
			if err != nil {
				t.Fatal(err)
			}
			if sa.Index() != nl.Attrs().Index || sa.Index() == oldIndex {
				t.Errorf("socket index %d, want the new interface's %d (old %d)", sa.Index(), nl.Attrs().Index, oldIndex)
			}
		})
	}
}

// waitUnbound waits until Run has noticed that the interface is down or
// gone and dropped its socket.
func waitUnbound(t *testing.T, s *Socket) {
	t.Helper()
	deadline := time.Now().Add(recoverDeadline)
	for s.Bound() {
		if time.Now().After(deadline) {
			t.Fatalf("socket still bound %v after its interface went away", recoverDeadline)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// checkBackoff keeps the interface away until the socket has retried a
// few times and checks that the retries are spaced by the back-off, not a
// busy loop: n attempts in elapsed time allow at most one per minBackoff
// (load can only make attempts rarer, so this bound cannot flake).
func checkBackoff(t *testing.T, s *Socket) {
	t.Helper()
	start, first := time.Now(), s.Stats().RebindAttempts
	deadline := start.Add(recoverDeadline)
	for s.Stats().RebindAttempts < first+5 {
		if time.Now().After(deadline) {
			t.Fatalf("only %d rebind attempts in %v", s.Stats().RebindAttempts-first, recoverDeadline)
		}
		time.Sleep(5 * time.Millisecond)
	}
	elapsed := time.Since(start)
	n := s.Stats().RebindAttempts - first
	if limit := 2 + uint64(elapsed/minBackoff); n > limit {
		t.Errorf("%d rebind attempts in %v: more than one per %v, no back-off", n, elapsed, minBackoff)
	}
	t.Logf("while down: %d rebind attempts in %v", n, elapsed.Round(time.Millisecond))
}
