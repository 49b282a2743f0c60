package agent

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/pseudocong/pseudocong/internal/clock"
)

func gather(t *testing.T, reg *prometheus.Registry) map[string][]*dto.Metric {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	out := map[string][]*dto.Metric{}
	for _, f := range families {
		out[f.GetName()] = f.GetMetric()
	}
	return out
}

func labelled(ms []*dto.Metric, want map[string]string) *dto.Metric {
next:
	for _, m := range ms {
		for _, lp := range m.GetLabel() {
			if v, ok := want[lp.GetName()]; ok && v != lp.GetValue() {
				continue next
			}
		}
		return m
	}
	return nil
}

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	cfg := pica8()
	cfg.MissQueueLimit = 30
	sim := clock.NewSim(t0)
	a, _ := newTestAgent(t, sim, cfg, m)
	sendMisses(sim, a, 60, time.Microsecond) // 1 building + 30 queued, 29 dropped
	sim.At(t0.Add(time.Second), func() { a.Submit(Job{Kind: "flow_mod", Cost: 2 * time.Millisecond}) })
	var depthMid float64
	sim.At(t0.Add(time.Millisecond), func() {
		depthMid = labelled(gather(t, reg)["pseudocong_agent_queue_depth"], map[string]string{"queue": "miss"}).GetGauge().GetValue()
	})
	sim.Run()

	got := gather(t, reg)
	if depthMid != 30 {
		t.Errorf("miss queue depth gauge %v during the burst, want 30", depthMid)
	}
	drops := labelled(got["pseudocong_agent_drops_total"], map[string]string{"what": "packet_in", "reason": "miss_queue_full"})
	if drops.GetCounter().GetValue() != 29 {
		t.Errorf("miss_queue_full drops %v, want 29", drops.GetCounter().GetValue())
	}
	h := got["pseudocong_agent_packet_in_batch_size"][0].GetHistogram()
	// 31 built: one batch of 25 by count, one of 6 by the timer.
	if h.GetSampleCount() != 2 || h.GetSampleSum() != 31 {
		t.Errorf("batch size histogram count %d sum %v, want 2 and 31", h.GetSampleCount(), h.GetSampleSum())
	}
	busy := labelled(got["pseudocong_agent_cpu_busy_seconds_total"], map[string]string{"work": "packet_in"})
	if v, want := busy.GetCounter().GetValue(), 31*0.0042; v < want-1e-9 || v > want+1e-9 {
		t.Errorf("packet_in busy %v s, want %v", v, want)
	}
	jl := labelled(got["pseudocong_agent_job_latency_seconds"], map[string]string{"kind": "flow_mod"}).GetHistogram()
	if jl.GetSampleCount() != 1 || jl.GetSampleSum() != 0.002 {
		t.Errorf("job latency count %d sum %v, want 1 and 0.002", jl.GetSampleCount(), jl.GetSampleSum())
	}
	if n := got["pseudocong_agent_packet_ins_sent_total"][0].GetCounter().GetValue(); n != 31 {
		t.Errorf("packet_ins_sent_total %v, want 31", n)
	}
	if n := got["pseudocong_agent_packet_in_latency_seconds"][0].GetHistogram().GetSampleCount(); n != 31 {
		t.Errorf("packet-in latency samples %d, want 31", n)
	}
	for _, q := range []string{"miss", "job", "rate_limit", "batch"} {
		if v := labelled(got["pseudocong_agent_queue_depth"], map[string]string{"queue": q}).GetGauge().GetValue(); v != 0 {
			t.Errorf("queue %s depth %v after the run, want 0", q, v)
		}
	}

	// A second set on the same registry collides.
	if _, err := NewMetrics(reg); err == nil {
		t.Error("duplicate registration not reported")
	}
}

// Several agents share a registry when each is wrapped with its own label.
func TestMetricsSeveralAgents(t *testing.T) {
	reg := prometheus.NewRegistry()
	for _, name := range []string{"s1", "s2"} {
		if _, err := NewMetrics(prometheus.WrapRegistererWith(prometheus.Labels{"switch": name}, reg)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if n := len(gather(t, reg)["pseudocong_agent_drops_total"]); n == 0 || n%2 != 0 {
		t.Errorf("drops series %d, want a pre-initialised set per switch", n)
	}
}
