package pipeline

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// Every series issue 3 asks for is registered once a pipeline is
// attached, under the pseudocong namespace.
func TestMetricsListOfTheIssue(t *testing.T) {
	r := newRig(t, loadProfile(t, "pica8-p3297", nil), Options{})
	for _, name := range []string{
		"pseudocong_tcam_entries",                       // TCAM occupancy
		"pseudocong_tcam_capacity_entries",              // and capacity
		"pseudocong_tcam_entries_moved_total",           // entries moved
		"pseudocong_tcam_insert_latency_seconds",        // insert latency histogram
		"pseudocong_agent_queue_depth",                  // agent queue depth
		"pseudocong_agent_packet_in_batch_size",         // Packet-In batch size histogram
		"pseudocong_agent_drops_total",                  // drops by reason (agent)
		"pseudocong_dataplane_drops_total",              // drops by reason (data plane)
		"pseudocong_dataplane_forwarding_delay_seconds", // forwarding delay histogram
		"pseudocong_dataplane_swap_ins_total",           // backing-table swap-ins
		"pseudocong_dataplane_backing_entries",
		"pseudocong_dataplane_held_packets",
	} {
		metricFamily(t, r.reg, name)
	}
	if v := metricFamily(t, r.reg, "pseudocong_tcam_capacity_entries").GetMetric()[0].GetGauge().GetValue(); v != 4000 {
		t.Errorf("tcam capacity gauge %g, want 4000", v)
	}
	// Several pipelines share a registry when each is wrapped with its
	// own label; unwrapped, the second is refused and leaves no series.
	if _, err := Attach(newRig(t, nil, Options{}).sw, Options{Profile: r.p.Profile(), Registerer: r.reg}); err == nil {
		t.Error("second pipeline registered the same series without an error")
	}
	shared := prometheus.NewRegistry()
	for _, name := range []string{"s1", "s2"} {
		wrapped := prometheus.WrapRegistererWith(prometheus.Labels{"switch": name}, shared)
		if _, err := Attach(newRig(t, nil, Options{}).sw, Options{Profile: r.p.Profile(), Registerer: wrapped}); err != nil {
			t.Errorf("switch %s: %v", name, err)
		}
	}
	if n := len(metricFamily(t, shared, "pseudocong_tcam_entries").GetMetric()); n != 2 {
		t.Errorf("%d tcam_entries series for two wrapped switches", n)
	}
}
