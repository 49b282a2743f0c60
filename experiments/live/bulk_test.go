package live

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pseudocong/pseudocong/controller/flowsyntax"
	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/testbed"
)

func bulkHosts() (testbed.Host, testbed.Host) {
	h := func(n int) testbed.Host {
		return testbed.Host{Index: n, Addr: netip.MustParsePrefix("10.0.0." + string(rune('0'+n)) + "/24"), MAC: testbed.HostMAC(n).String()}
	}
	return h(1), h(2)
}

// The proactive rule file parses as the controller will read it: per
// flow a data rule 1 → 2 and an ACK rule 2 → 1 on the flow's exact
// tuple, with the pattern's priorities in the sim's numbering.
func TestBulkRules(t *testing.T) {
	h1, h2 := bulkHosts()
	ports := []uint16{40000, 40001, 40002}
	for _, c := range []struct {
		pattern string
		prio    func(k int) uint16
	}{
		{"ascending", func(k int) uint16 { return uint16(1 + k) }},
		{"descending", func(k int) uint16 { return uint16(0xffff - k) }},
	} {
		text, err := BulkRules(h1, h2, ports, BulkSinkPort, c.pattern)
		if err != nil {
			t.Fatal(err)
		}
		flows, err := flowsyntax.Parse(strings.NewReader(text))
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.pattern, err, text)
		}
		if len(flows) != 2*len(ports) {
			t.Fatalf("%s: %d rules, want %d", c.pattern, len(flows), 2*len(ports))
		}
		for i, p := range ports {
			fwd, rev := flows[2*i], flows[2*i+1]
			if fwd.Priority != c.prio(2*i) || rev.Priority != c.prio(2*i+1) {
				t.Errorf("%s flow %d: priorities %d, %d", c.pattern, i, fwd.Priority, rev.Priority)
			}
			m := fwd.Match
			if m.InPort != 1 || m.TpSrc != p || m.TpDst != BulkSinkPort || m.NwProto != 6 || m.DlType != 0x0800 ||
				m.NwSrc != 0x0a000001 || m.NwDst != 0x0a000002 || m.Wildcards&(openflow.WildcardTpSrc|openflow.WildcardTpDst|openflow.WildcardInPort) != 0 {
				t.Errorf("%s flow %d data rule: %v", c.pattern, i, m.String())
			}
			r := rev.Match
			if r.InPort != 2 || r.TpSrc != BulkSinkPort || r.TpDst != p || r.NwSrc != 0x0a000002 || r.NwDst != 0x0a000001 {
				t.Errorf("%s flow %d ACK rule: %v", c.pattern, i, r.String())
			}
			if len(fwd.Actions) != 1 || fwd.Actions[0] != (openflow.ActionOutput{Port: 2}) ||
				len(rev.Actions) != 1 || rev.Actions[0] != (openflow.ActionOutput{Port: 1}) {
				t.Errorf("%s flow %d: actions %v, %v", c.pattern, i, fwd.Actions, rev.Actions)
			}
		}
	}
	if _, err := BulkRules(h1, h2, ports, BulkSinkPort, "sideways"); err == nil {
		t.Error("unknown pattern accepted")
	}
	many := make([]uint16, 40000)
	if _, err := BulkRules(h1, h2, many, BulkSinkPort, "ascending"); err == nil {
		t.Error("80 000 ascending priorities accepted")
	}
}

// TCP_INFO becomes a trace sample in the sim tracer's units.
func TestSampleOf(t *testing.T) {
	in := &unix.TCPInfo{Ca_state: 4, Snd_cwnd: 1, Snd_ssthresh: 17, Rtt: 4500, Rto: 204000, Unacked: 3, Snd_mss: 1448,
		Bytes_acked: 123456, Total_retrans: 9}
	s := sampleOf(250*time.Millisecond, in)
	if s.T != 250*time.Millisecond || s.Cwnd != 1 || s.Ssthresh != 17 || s.SRTT != 4500*time.Microsecond || s.RTO != 204*time.Millisecond ||
		s.BytesInFlight != 3*1448 || s.DeliveredBytes != 123456 || s.Retrans != 9 || s.Phase != "loss" {
		t.Errorf("sample %+v", s)
	}
	in.Ca_state = 9
	if s := sampleOf(0, in); s.Phase != "unknown" {
		t.Errorf("ca_state 9: phase %q", s.Phase)
	}
}
