package policing

import (
	"testing"
	"time"
)

// The path from the client to each VM has the paper's round trips, and
// a mode lands on the CPE's WAN (uploads) and LAN (downloads) queues.
func TestPathAndModes(t *testing.T) {
	s := loadSpec(t)
	plan, err := s.Plan()
	if err != nil {
		t.Fatal(err)
	}
	for srv, rtt := range map[string]time.Duration{"front": 30200 * time.Microsecond, "aggr": 27900 * time.Microsecond} {
		p, err := FindPath(plan, "client", srv)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.BaseRTT(); got != rtt {
			t.Errorf("%s: base RTT %v, want %v", srv, got, rtt)
		}
		if len(p.Switches) != 4 || p.Switches[0] != "cpe" || p.Switches[3] != "pe" {
			t.Errorf("%s: switches %v", srv, p.Switches)
		}
	}
	m, _ := s.Mode("shape_loss")
	p, err := s.ModePath(plan, "front", m)
	if err != nil {
		t.Fatal(err)
	}
	if p.Hops[1].UpQdisc != m.CPEQdisc || p.Hops[0].DownQdisc != m.CPEQdisc || p.Hops[1].Loss != m.WANLoss {
		t.Errorf("mode not applied: %+v / %+v", p.Hops[0], p.Hops[1])
	}
	if p.Hops[1].DownQdisc == m.CPEQdisc || p.Hops[0].UpQdisc == m.CPEQdisc {
		t.Errorf("mode applied to the wrong ends: %+v / %+v", p.Hops[0], p.Hops[1])
	}
}

// The live chain gets each hop's queue on the sending switch port, and a
// host hop's delay on the port towards that host (twice: both ways).
func TestSwitchEmus(t *testing.T) {
	s := loadSpec(t)
	plan, err := s.Plan()
	if err != nil {
		t.Fatal(err)
	}
	m, _ := s.Mode("police")
	p, err := s.ModePath(plan, "front", m)
	if err != nil {
		t.Fatal(err)
	}
	e, err := SwitchEmus(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(e) != 4 {
		t.Fatalf("%d switches", len(e))
	}
	cpe, pe := e[0], e[3]
	if cpe.Right.Qdisc != m.CPEQdisc || cpe.Right.Delay != "12500us" || cpe.Left.Qdisc != m.CPEQdisc || cpe.Left.Delay != "100us" {
		t.Errorf("cpe %+v", cpe)
	}
	if pe.Right.Qdisc != "police,rate=20mbit,burst=125000" || pe.Right.Delay != "3100us" || pe.Left.Qdisc != "" {
		t.Errorf("pe %+v", pe)
	}
	if e[1].Left.Delay != "12500us" || e[1].Left.Qdisc != "" {
		t.Errorf("agw %+v", e[1])
	}
}
