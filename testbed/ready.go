package testbed

import (
	"fmt"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// readyTimeout bounds the wait for links to become operationally up.
const readyTimeout = 5 * time.Second

// WaitOperUp waits until ifname (in namespace nsName, "" = the caller's)
// is operationally up. The kernel activates a device's queueing
// discipline in its link-watch work, at most once a second; until then
// every frame sent is dropped, so the first ARP request of a fresh link
// vanishes and the first connection stalls for the 1 s ARP retry. A link
// that reports operstate UP has been through link watch.
func WaitOperUp(nsName, ifname string, timeout time.Duration) error {
	nl := &netlink.Handle{}
	if nsName != "" {
		nsh, err := netns.GetFromName(nsName)
		if err != nil {
			return fmt.Errorf("netns %s: %w", nsName, err)
		}
		defer nsh.Close()
		if nl, err = netlink.NewHandleAt(nsh); err != nil {
			return fmt.Errorf("netlink in %s: %w", nsName, err)
		}
		defer nl.Close()
	}
	deadline := time.Now().Add(timeout)
	for {
		l, err := nl.LinkByName(ifname)
		if err != nil {
			return fmt.Errorf("%s in %q: %w", ifname, nsName, err)
		}
		if l.Attrs().OperState == netlink.OperUp {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s in %q: operstate %s after %v", ifname, nsName, l.Attrs().OperState, timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitReady waits for both ends of every host's pair.
func waitReady(topo *Topology) error {
	for _, h := range topo.Hosts {
		if err := WaitOperUp("", h.SwitchPort, readyTimeout); err != nil {
			return err
		}
		if err := WaitOperUp(h.Netns, h.Iface, readyTimeout); err != nil {
			return err
		}
	}
	return nil
}
