package pipeline

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/profile"
)

// OpenFlow 1.0 semantics seen from outside are the same with the modelled
// pipeline as with the ideal seams: the same messages in the same order,
// the same flow stats and counters, the same timeouts and FLOW_REMOVEDs,
// the same packets delivered. Only timing differs (durations and the
// table's max_entries, which is the profile's TCAM + backing size, are
// left out of the comparison).
func TestOpenFlowSemanticsUnchanged(t *testing.T) {
	ideal := semanticsScenario(t, nil)
	for _, name := range []string{"ideal", "pica8-p3297"} {
		prof := loadProfile(t, name, nil)
		got := semanticsScenario(t, prof)
		if !slices.Equal(got, ideal) {
			t.Errorf("%s pipeline differs from the ideal seams:\n got %q\nwant %q", name, got, ideal)
		}
	}
	t.Logf("ideal: %q", ideal)
	if len(ideal) < 10 {
		t.Fatalf("scenario produced too little to compare: %q", ideal)
	}
}

func semanticsScenario(t *testing.T, prof *profile.Profile) []string {
	r := newRig(t, prof, Options{})
	withFlags := func(fm *openflow.FlowMod, cookie uint64, idle, hard, flags uint16) *openflow.FlowMod {
		fm.Cookie, fm.IdleTimeout, fm.HardTimeout, fm.Flags = cookie, idle, hard, flags
		return fm
	}
	stats := func(xid uint32, body openflow.StatsRequestBody) *openflow.StatsRequest {
		return &openflow.StatsRequest{Header: openflow.Header{Version: openflow.Version, Type: openflow.TypeStatsRequest, Xid: xid}, Body: body}
	}
	all := openflow.FlowStatsRequest{Match: openflow.MatchAll(), TableID: 0xff, OutPort: openflow.PortNone}
	r.at(0, func() {
		r.send(withFlags(ruleFor(1, 10), 0xa, 2, 0, openflow.FlowModFlagSendFlowRem))
		r.send(withFlags(ruleFor(2, 20), 0xb, 0, 5, 0))
		r.send(withFlags(ruleFor(3, 30), 0xc, 0, 0, openflow.FlowModFlagSendFlowRem))
		r.send(barrier(100))
	})
	r.at(time.Second, func() {
		seq := uint32(0)
		for _, host := range []int{1, 1, 2, 3, 1, 2, 4} {
			r.sw.Receive(1, frame(t, host, seq))
			seq++
		}
	})
	r.at(1500*time.Millisecond, func() {
		r.send(stats(200, all))
		r.send(stats(201, openflow.AggregateStatsRequest{Match: openflow.MatchAll(), TableID: 0xff, OutPort: openflow.PortNone}))
	})
	r.at(4*time.Second, func() {
		del := ruleFor(3, 30)
		del.Command, del.Actions = openflow.FlowModDeleteStrict, nil
		r.send(del)
		r.send(barrier(300))
	})
	r.at(6*time.Second, func() {
		r.send(stats(202, all))
		r.send(stats(203, openflow.TableStatsRequest{}))
	})
	r.run()

	var out []string
	for _, tm := range r.ctl.take() {
		out = append(out, describe(tm.m)...)
	}
	for _, d := range r.deliveries() {
		out = append(out, fmt.Sprintf("delivered seq %d", d.seq))
	}
	return out
}

// describe renders a message without its timing fields.
func describe(m openflow.Message) []string {
	switch m := m.(type) {
	case *openflow.StatsReply:
		switch b := m.Body.(type) {
		case openflow.FlowStatsReply:
			out := []string{fmt.Sprintf("flow stats xid %d: %d entries", m.Xid, len(b))}
			for _, f := range b {
				out = append(out, fmt.Sprintf("  %v prio %d cookie %#x idle %d hard %d packets %d bytes %d actions %v",
					f.Match.String(), f.Priority, f.Cookie, f.IdleTimeout, f.HardTimeout, f.PacketCount, f.ByteCount, f.Actions))
			}
			return out
		case openflow.AggregateStats:
			return []string{fmt.Sprintf("aggregate xid %d: %+v", m.Xid, b)}
		case openflow.TableStatsReply:
			var out []string
			for _, ts := range b {
				out = append(out, fmt.Sprintf("table xid %d: active %d lookups %d matched %d", m.Xid, ts.ActiveCount, ts.LookupCount, ts.MatchedCount))
			}
			return out
		}
	case *openflow.FlowRemoved:
		return []string{fmt.Sprintf("flow removed %v prio %d cookie %#x reason %d idle %d packets %d bytes %d",
			m.Match.String(), m.Priority, m.Cookie, m.Reason, m.IdleTimeout, m.PacketCount, m.ByteCount)}
	case *openflow.PacketIn:
		return []string{fmt.Sprintf("packet-in port %d reason %d len %d", m.InPort, m.Reason, m.TotalLen)}
	}
	return []string{fmt.Sprintf("%v xid %d", m.MsgType(), m.GetXid())}
}
