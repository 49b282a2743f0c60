//go:build integration

package testbed

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/pseudocong/pseudocong/internal/testenv"
)

// uniqueName returns a testbed name no concurrent test uses, and removes
// whatever the test built under it at cleanup, even on failure.
func uniqueName(t *testing.T, stateDir string) string {
	t.Helper()
	testenv.RequireRoot(t)
	var b [3]byte
	_, _ = rand.Read(b[:])
	name := "t" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		if err := Down(name, DownOptions{StateDir: stateDir}); err != nil {
			t.Errorf("cleanup down: %v", err)
		}
		if f, err := discover(name); err == nil && len(f.indices()) > 0 {
			t.Errorf("cleanup left hosts %v", f.indices())
		}
	})
	return name
}

func TestUpStatusDown(t *testing.T) {
	dir := t.TempDir()
	name := uniqueName(t, dir)
	ctx := context.Background()

	topo, err := Up(ctx, Config{Name: name, Hosts: 3, StateDir: dir})
	if err != nil {
		t.Fatalf("up: %v", err)
	}
	if len(topo.Hosts) != 3 || topo.SwitchPorts()[2] != name+"-s3" {
		t.Fatalf("topology %+v", topo)
	}
	st, err := GetStatus(name)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Healthy() || len(st.Hosts) != 3 {
		t.Fatalf("status not healthy: %+v", st)
	}
	for _, h := range st.Hosts {
		if !h.TxChecksumOff || !h.IPv6Off || !h.HasAddr || !h.SwitchPortUp {
			t.Errorf("host %d: %+v", h.Index, h)
		}
	}
	if saved, err := ReadState(dir, name); err != nil || len(saved.Hosts) != 3 {
		t.Errorf("state file: %v %+v", err, saved)
	}

	// Idempotent: a second Up changes nothing and is healthy.
	port1, _ := netlink.LinkByName(name + "-s1")
	if _, err := Up(ctx, Config{Name: name, Hosts: 3, StateDir: dir}); err != nil {
		t.Fatalf("second up: %v", err)
	}
	again, _ := netlink.LinkByName(name + "-s1")
	if port1 == nil || again == nil || port1.Attrs().Index != again.Attrs().Index {
		t.Errorf("second up recreated %s-s1", name)
	}

	// Repair: turn offload back on and delete an address; Up fixes both.
	if err := Do(NamespaceName(name, 2), func() error { return SetTxChecksum(HostIfName, true) }); err != nil {
		t.Fatal(err)
	}
	if st, _ := GetStatus(name); st.Healthy() {
		t.Fatalf("status healthy with offload on")
	}
	if _, err := Up(ctx, Config{Name: name, Hosts: 3, StateDir: dir}); err != nil {
		t.Fatalf("repair up: %v", err)
	}
	if st, _ := GetStatus(name); !st.Healthy() {
		t.Fatalf("not repaired: %+v", st)
	}

	// Repair: a host whose veth pair vanished gets a new one.
	if l, err := netlink.LinkByName(name + "-s3"); err != nil {
		t.Fatal(err)
	} else if err := netlink.LinkDel(l); err != nil {
		t.Fatal(err)
	}
	if st, _ := GetStatus(name); st.Healthy() {
		t.Fatalf("status healthy without %s-s3", name)
	}
	if _, err := Up(ctx, Config{Name: name, Hosts: 3, StateDir: dir}); err != nil {
		t.Fatalf("repair up: %v", err)
	}
	if st, _ := GetStatus(name); !st.Healthy() {
		t.Fatalf("veth not repaired: %+v", st)
	}

	// Shrink: hosts beyond the new count disappear.
	if _, err := Up(ctx, Config{Name: name, Hosts: 1, StateDir: dir}); err != nil {
		t.Fatalf("shrink: %v", err)
	}
	if st, _ := GetStatus(name); len(st.Hosts) != 1 || !st.Healthy() {
		t.Fatalf("after shrink: %+v", st)
	}

	if err := Down(name, DownOptions{StateDir: dir}); err != nil {
		t.Fatalf("down: %v", err)
	}
	if st, _ := GetStatus(name); len(st.Hosts) != 0 {
		t.Fatalf("after down: %+v", st)
	}
	if _, err := os.Stat(statePath(dir, name)); !os.IsNotExist(err) {
		t.Errorf("state file survives down: %v", err)
	}
	// Down of a missing testbed is fine.
	if err := Down(name, DownOptions{StateDir: dir}); err != nil {
		t.Errorf("second down: %v", err)
	}
}

// failAfter is a context that reports cancellation after n Err calls, so
// Up fails half-way through.
type failAfter struct {
	context.Context
	n int
}

func (f *failAfter) Err() error {
	f.n--
	if f.n < 0 {
		return errors.New("injected failure")
	}
	return nil
}

func TestUpCleansUpOnFailure(t *testing.T) {
	dir := t.TempDir()
	name := uniqueName(t, dir)
	_, err := Up(&failAfter{Context: context.Background(), n: 2}, Config{Name: name, Hosts: 3, StateDir: dir})
	if err == nil {
		t.Fatal("up succeeded despite injected failure")
	}
	f, derr := discover(name)
	if derr != nil {
		t.Fatal(derr)
	}
	if len(f.indices()) != 0 {
		t.Fatalf("failed up left hosts %v behind", f.indices())
	}
}
