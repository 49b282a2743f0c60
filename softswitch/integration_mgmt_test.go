//go:build integration

package softswitch

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/internal/testenv"
	"github.com/pseudocong/pseudocong/openflow"
)

// ovs-ofctl keeps working while another management client floods DESC
// requests and never reads (it used to fail 4 times in 6: the switch
// waited for the non-reader, and everything else waited behind it).
func TestOvsOfctlWhileAClientDoesNotRead(t *testing.T) {
	testenv.RequireCommand(t, "ovs-ofctl")
	_, sess, target := liveSwitch(t, "", 2)
	hog := rawClient(t, sess.ListenAddrs()[0].String(), "")
	flood(t, hog, msgBytes(t, statsReq(5, openflow.DescStatsRequest{})), 1000000)
	for i := range 6 {
		began := time.Now()
		out := ofctl(t, "--timeout=10", "show", target)
		if d := time.Since(began); d > 5*time.Second {
			t.Fatalf("show %d took %v", i, d)
		}
		if !strings.Contains(out, "dpid:000000000000005c") {
			t.Fatalf("show %d:\n%s", i, out)
		}
	}
	ofctl(t, "--timeout=10", "add-flow", target, "in_port=1,actions=output:2")
	if out := ofctl(t, "--timeout=10", "dump-flows", target); !strings.Contains(out, "in_port=1 actions=output:2") {
		t.Fatalf("dump-flows:\n%s", out)
	}
}

// A flow dump larger than the reply backlog and the write queue reaches
// ovs-ofctl whole.
func TestOvsOfctlDumpsALargeTable(t *testing.T) {
	testenv.RequireCommand(t, "ovs-ofctl")
	_, sess, target := liveSwitch(t, "", 2)
	nc, err := net.Dial("tcp", sess.ListenAddrs()[0].String())
	if err != nil {
		t.Fatal(err)
	}
	c := openflow.NewConn(nc, openflow.ConnConfig{})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Handshake(ctx); err != nil {
		t.Fatal(err)
	}
	const n = 20000 // about 2 MB of flow stats, twice the default backlog
	for i := range n {
		m := openflow.Match{Wildcards: openflow.WildcardAll &^ openflow.WildcardTpSrc &^ openflow.WildcardTpDst &^
			openflow.WildcardNwProto &^ openflow.WildcardDlType, DlType: 0x0800, NwProto: 17, TpSrc: uint16(i%60000 + 1), TpDst: uint16(i/60000 + 1)}
		if err := c.Send(flowMod(openflow.FlowModAdd, m, 10, output(2))); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Barrier(ctx); err != nil {
		t.Fatal(err)
	}
	out := ofctl(t, "--timeout=20", "dump-flows", target)
	if got := strings.Count(out, "actions=output:2"); got != n {
		t.Fatalf("ovs-ofctl saw %d of %d flows", got, n)
	}
}

// Management connections from one address that finished HELLO and then
// trickle bytes cannot lock ovs-ofctl out: the per-peer limit refuses them
// beyond their share (they come from 127.0.0.2, ovs-ofctl from 127.0.0.1).
func TestOvsOfctlNotLockedOutByTricklers(t *testing.T) {
	testenv.RequireCommand(t, "ovs-ofctl")
	_, sess, target := liveSwitch(t, "", 2)
	addr := sess.ListenAddrs()[0].String()
	served := 0
	for range 64 {
		if c := tryHello(t, addr, "127.0.0.2"); c != nil {
			served++
			trickle(t, c, 2*time.Second)
		}
	}
	out, err := testenv.Ofctl("-O", "OpenFlow10", "--timeout=10", "show", target)
	if err != nil || !strings.Contains(out, "dpid:000000000000005c") {
		t.Fatalf("show with %d trickling connections open: %v\n%s", served, err, out)
	}
	if served == 0 || served > 16 {
		t.Fatalf("%d of 64 trickling connections from one address served, want 1..16", served)
	}
}
