//go:build integration

package afport

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/internal/testenv"
	"github.com/pseudocong/pseudocong/testbed"
)

// wire is a two-port forwarder standing in for the switch core: a frame
// received on port 1 leaves on port 2 and vice versa. It records frames so
// the test can check that no port hears its own transmissions.
type wire struct {
	mu    sync.Mutex
	ports map[uint16]*Port
	rx    map[uint16]map[string]int
	tx    map[uint16]map[string]int
	down  map[uint16][]bool
}

func newWire() *wire {
	return &wire{
		ports: map[uint16]*Port{},
		rx:    map[uint16]map[string]int{1: {}, 2: {}},
		tx:    map[uint16]map[string]int{1: {}, 2: {}},
		down:  map[uint16][]bool{},
	}
}

func (w *wire) Receive(in uint16, frame []byte) {
	out := uint16(3 - in)
	w.mu.Lock()
	w.rx[in][string(frame)]++
	w.tx[out][string(frame)]++
	p := w.ports[out]
	w.mu.Unlock()
	_ = p.Transmit(frame)
}

func (w *wire) SetLinkDown(no uint16, down bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.down[no] = append(w.down[no], down)
	return nil
}

func (w *wire) linkEvents(no uint16) []bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]bool(nil), w.down[no]...)
}

func upTestbed(t *testing.T) *testbed.Topology {
	t.Helper()
	topo, _ := upTestbedConfig(t)
	return topo
}

// upTestbedConfig brings up a two-host testbed private to the test and
// also returns its config, for a test that runs testbed.Up again.
func upTestbedConfig(t *testing.T) (*testbed.Topology, testbed.Config) {
	t.Helper()
	testenv.RequireRoot(t)
	var b [3]byte
	_, _ = rand.Read(b[:])
	name := "a" + hex.EncodeToString(b[:])
	dir := t.TempDir()
	t.Cleanup(func() {
		if err := testbed.Down(name, testbed.DownOptions{StateDir: dir}); err != nil {
			t.Errorf("testbed down: %v", err)
		}
	})
	cfg := testbed.Config{Name: name, Hosts: 2, StateDir: dir}
	topo, err := testbed.Up(t.Context(), cfg)
	if err != nil {
		t.Fatalf("testbed up: %v", err)
	}
	return topo, cfg
}

func TestPortPairForwardsPingAndTCP(t *testing.T) {
	for _, version := range []int{2, 3} {
		t.Run(fmt.Sprintf("tpacket_v%d", version), func(t *testing.T) { testPortPair(t, version) })
	}
}

func testPortPair(t *testing.T, version int) {
	testenv.RequireCommand(t, "ping", "ip")
	topo := upTestbed(t)
	w := newWire()
	for i, ifname := range topo.SwitchPorts() {
		p, err := Open(Options{No: uint16(i + 1), IfName: ifname, TPacketVersion: version})
		if err != nil {
			t.Fatalf("open %s: %v", ifname, err)
		}
		t.Cleanup(func() { _ = p.Close() })
		w.ports[p.No()] = p
	}
	for _, p := range w.ports {
		if err := p.Start(w); err != nil {
			t.Fatal(err)
		}
	}
	for no := uint16(1); no <= 2; no++ {
		if ev := w.linkEvents(no); len(ev) == 0 || ev[0] {
			t.Errorf("port %d: initial link events %v, want first = up (false)", no, ev)
		}
	}

	h1, h2 := topo.Hosts[0], topo.Hosts[1]
	out, err := exec.Command("ip", "netns", "exec", h1.Netns, "ping", "-c", "5", "-i", "0.2", "-W", "2",
		h2.Addr.Addr().String()).CombinedOutput()
	if err != nil {
		t.Fatalf("ping through the port pair: %v\n%s", err, out)
	}
	t.Logf("ping: %s", lastLine(string(out)))

	// TCP: a real handshake and payload both ways. With TX checksum
	// offload left on at the hosts this would time out.
	msg := tcpEcho(t, h1.Netns, h2.Netns, h2.Addr.Addr().String())
	if msg != "hello through afport" {
		t.Fatalf("tcp echo got %q", msg)
	}

	// No port heard its own transmissions.
	w.mu.Lock()
	for no := uint16(1); no <= 2; no++ {
		for f := range w.rx[no] {
			if w.tx[no][f] > 0 {
				t.Errorf("port %d received a frame it had transmitted (%d bytes)", no, len(f))
			}
		}
	}
	w.mu.Unlock()

	// Link down at host 2's end shows as link down on port 2.
	if out, err := exec.Command("ip", "-n", h2.Netns, "link", "set", h2.Iface, "down").CombinedOutput(); err != nil {
		t.Fatalf("link down: %v %s", err, out)
	}
	deadline := time.Now().Add(3 * time.Second)
	for {
		ev := w.linkEvents(2)
		if len(ev) > 1 && ev[len(ev)-1] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("port 2 link events %v: no link-down", ev)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if out, err := exec.Command("ip", "-n", h2.Netns, "link", "set", h2.Iface, "up").CombinedOutput(); err != nil {
		t.Fatalf("link up: %v %s", err, out)
	}
	for deadline = time.Now().Add(3 * time.Second); ; {
		ev := w.linkEvents(2)
		if !ev[len(ev)-1] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("port 2 link events %v: no link-up after link-down", ev)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// tcpEcho listens in serverNS, dials from clientNS, sends a line and
// returns what the server read.
func tcpEcho(t *testing.T, clientNS, serverNS, serverIP string) string {
	t.Helper()
	var ln net.Listener
	if err := testbed.Do(serverNS, func() (err error) {
		ln, err = net.Listen("tcp4", serverIP+":0")
		return err
	}); err != nil {
		t.Fatalf("listen in %s: %v", serverNS, err)
	}
	defer ln.Close()
	got := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- "accept: " + err.Error()
			return
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil {
			got <- "read: " + err.Error()
			return
		}
		got <- strings.TrimSpace(line)
	}()
	var conn net.Conn
	if err := testbed.Do(clientNS, func() (err error) {
		conn, err = net.DialTimeout("tcp4", ln.Addr().String(), 5*time.Second)
		return err
	}); err != nil {
		t.Fatalf("dial from %s: %v", clientNS, err)
	}
	defer conn.Close()
	if _, err := fmt.Fprintln(conn, "hello through afport"); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-got:
		return s
	case <-time.After(10 * time.Second):
		t.Fatal("tcp echo timed out")
		return ""
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
