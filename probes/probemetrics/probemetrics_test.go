package probemetrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/pseudocong/pseudocong/probes"
)

func TestObserverHistogram(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	o, err := New(reg)
	if err != nil {
		t.Fatal(err)
	}
	o.ObserveRTT(probes.KindSYN, 5*time.Second)
	o.ObserveRTT(probes.KindSYN, 5800*time.Millisecond) // Prometheus buckets are upper-inclusive (le): counts in le="5.8"
	o.ObserveRTT(probes.KindSYN, 80*time.Second)
	o.ObserveRTT(probes.KindData, 2*time.Second)

	if n := testutil.CollectAndCount(reg, "pseudocong_probe_rtt_seconds"); n != 2 {
		t.Fatalf("%d series, want 2 (syn, data)", n)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var synCount uint64
	var le58, le75 uint64
	for _, m := range mfs[0].GetMetric() {
		if m.GetLabel()[0].GetValue() != "syn" {
			continue
		}
		h := m.GetHistogram()
		synCount = h.GetSampleCount()
		for _, b := range h.GetBucket() {
			switch b.GetUpperBound() {
			case 5.8:
				le58 = b.GetCumulativeCount()
			case 75:
				le75 = b.GetCumulativeCount()
			}
		}
	}
	if synCount != 3 || le58 != 2 || le75 != 2 {
		t.Fatalf("syn count=%d le5.8=%d le75=%d, want 3, 2, 2", synCount, le58, le75)
	}
}

func TestNewErrors(t *testing.T) {
	if _, err := New(nil); err == nil {
		t.Fatal("nil registerer accepted")
	}
	reg := prometheus.NewRegistry()
	if _, err := New(reg); err != nil {
		t.Fatal(err)
	}
	_, err := New(reg)
	if err == nil || !strings.Contains(err.Error(), "register rtt histogram") {
		t.Fatalf("double registration error = %v", err)
	}
}
