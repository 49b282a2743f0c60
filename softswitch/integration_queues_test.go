//go:build integration

package softswitch

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/internal/testenv"
	"github.com/pseudocong/pseudocong/netsim"
	"github.com/pseudocong/pseudocong/softswitch/egress"
)

// ovs-ofctl, a strict parser, reads our QUEUE_GET_CONFIG_REPLY and QUEUE
// stats: a port with a two-queue prio qdisc shows queues 0 and 1, frames
// ENQUEUEd by a flow ovs-ofctl added are counted in their queue, and
// add-flow to a queue the port lacks is refused with BAD_QUEUE.
func TestOvsOfctlQueues(t *testing.T) {
	testenv.RequireCommand(t, "ovs-ofctl")
	sw, _, target := liveSwitch(t, "", 1)
	q, err := netsim.ParseQdisc("prio(droptail,limit=100;droptail,limit=100)")
	if err != nil {
		t.Fatal(err)
	}
	mp := NewMemPort(2, "mem2", MemPortMAC(0x5c, 2), nil)
	send := func(f []byte) error { return mp.Transmit(append([]byte(nil), f...)) }
	eg, err := egress.New(clock.Wall{}, send, egress.Config{Qdisc: q})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eg.Close)
	if err := sw.AddPort(&queuedMemPort{MemPort: mp, eg: eg}); err != nil {
		t.Fatal(err)
	}

	out := ofctl(t, "--timeout=10", "queue-get-config", target, "2")
	t.Logf("queue-get-config:\n%s", out)
	if !regexp.MustCompile(`(?m)^queue 0:`).MatchString(out) || !regexp.MustCompile(`(?m)^queue 1:`).MatchString(out) ||
		strings.Contains(out, "queue 2") {
		t.Fatalf("queue-get-config 2 does not list exactly queues 0 and 1:\n%s", out)
	}
	if out := ofctl(t, "--timeout=10", "queue-get-config", target, "1"); strings.Contains(out, "queue ") {
		t.Fatalf("port 1 has no queues, ovs-ofctl shows:\n%s", out)
	}

	ofctl(t, "--timeout=10", "add-flow", target, "in_port=1,udp,tp_dst=81,actions=enqueue:2:1")
	if out, err := testenv.Ofctl("-O", "OpenFlow10", "--timeout=10", "add-flow", target, "in_port=1,udp,tp_dst=82,actions=enqueue:2:5"); err == nil ||
		!strings.Contains(out, "OFPBAC_BAD_QUEUE") {
		t.Fatalf("add-flow to queue 5 of a 2-queue port: err %v, want OFPBAC_BAD_QUEUE:\n%s", err, out)
	}
	frame := udpFrame(t, 1, 81)
	const n = 7
	for range n {
		sw.Receive(1, append([]byte(nil), frame...))
	}
	out = ofctl(t, "--timeout=10", "queue-stats", target)
	t.Logf("queue-stats:\n%s", out)
	if !strings.Contains(out, "2 queues") {
		t.Errorf("queue-stats does not show 2 queues:\n%s", out)
	}
	want := fmt.Sprintf("bytes=%d, pkts=%d, errors=0", n*len(frame), n)
	if !regexp.MustCompile(`port\s+2 queue 1: `+want).MatchString(out) || !strings.Contains(out, "queue 0: bytes=0, pkts=0, errors=0") {
		t.Fatalf("queue-stats, want queue 1 of port 2 with %s:\n%s", want, out)
	}
	if out := ofctl(t, "--timeout=10", "queue-stats", target, "2", "1"); !strings.Contains(out, want) || strings.Contains(out, "queue 0") {
		t.Fatalf("queue-stats 2 1:\n%s", out)
	}
}
