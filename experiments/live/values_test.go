package live

import (
	"errors"
	"math"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/experiments/sim"
	plive "github.com/pseudocong/pseudocong/probes/live"
	"github.com/pseudocong/pseudocong/profile"
)

func ms(xs ...int) []time.Duration {
	out := make([]time.Duration, len(xs))
	for i, x := range xs {
		out[i] = time.Duration(x) * time.Millisecond
	}
	return out
}

func outcome(delays []time.Duration, lost ...int) *sim.Outcome {
	o := &sim.Outcome{Delays: delays, Delivered: make([]bool, len(delays))}
	for i := range o.Delivered {
		o.Delivered[i] = true
	}
	for _, i := range lost {
		o.Delivered[i] = false
	}
	return o
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []time.Duration
		want time.Duration
	}{
		{ms(5), 5 * time.Millisecond},
		{ms(3, 1, 2), 2 * time.Millisecond},
		{ms(4, 1, 3, 2), 2500 * time.Microsecond},
	} {
		if got := sortedMedian(tc.in); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestValuesAgreement(t *testing.T) {
	cells := []Cell{{Key: "handshake.10pps"}, {Key: "handshake.100pps"}}
	live := []*sim.Outcome{
		outcome(ms(200, 220, 240)),              // median 220
		outcome(ms(2000, 3000, 4000, 99999), 3), // the lost flow is ignored: median 3000
	}
	simulated := []*sim.Outcome{
		outcome(ms(190, 200, 210)),    // median 200 -> 1.1
		outcome(ms(2000, 2500, 3000)), // median 2500 -> 1.2
	}
	v := Values(cells, live, simulated, nil)
	check := func(key string, want float64) {
		t.Helper()
		got, ok := v[key]
		if !ok || len(got) != 1 || math.Abs(got[0]-want) > 1e-9 {
			t.Errorf("%s = %v, want %v", key, got, want)
		}
	}
	check(KeyAgreement+".handshake.10pps", 1.1)
	check(KeyAgreement+".handshake.100pps", 1.2)
	check(KeyAgreement, math.Sqrt(1.1*1.2))
	check("agreement.live_median_rtt_s", 1.12) // median of 200,220,240,2000,3000,4000
	check("agreement.sim_median_rtt_s", 1.105)
}

func TestValuesNoAnswersNoRatio(t *testing.T) {
	v := Values([]Cell{{Key: "h"}}, []*sim.Outcome{outcome(ms(5), 0)}, []*sim.Outcome{outcome(ms(5))}, nil)
	if _, ok := v[KeyAgreement]; ok {
		t.Errorf("ratio reported without live answers: %v", v)
	}
}

func TestKernelSummary(t *testing.T) {
	results := []plive.TCPResult{
		{Connected: true, Handshake: 300 * time.Millisecond},
		{Connected: true, Handshake: 1200 * time.Millisecond, Retransmits: 1},
		{Connected: true, Handshake: 3500 * time.Millisecond, Retransmits: 2},
		{Connected: false, Handshake: 60 * time.Second, Retransmits: 5, Err: errors.New("timeout")},
	}
	kr := summarizeKernel("pica8-p3297", results)
	if kr.SYNRetransmits != 8 || kr.Retransmitted != 3 || kr.Connected != 3 {
		t.Errorf("counts %+v", kr)
	}
	if kr.P50 != 1200*time.Millisecond || kr.Max != 3500*time.Millisecond {
		t.Errorf("p50 %v max %v, want 1.2s 3.5s (completed connects only)", kr.P50, kr.Max)
	}
	v := Values(nil, nil, nil, []KernelResult{kr, summarizeKernel("ideal", results[:1])})
	for key, want := range map[string]float64{
		"kernel.syn_retransmits.pica8-p3297":     8,
		"kernel.syn_retransmits.ideal":           0,
		"kernel.handshake_p50_s.pica8-p3297":     1.2,
		"kernel.handshake_p50_s.ideal":           0.3,
		"kernel.retransmitted_share.pica8-p3297": 0.75,
		"kernel.connected_share.pica8-p3297":     0.75,
	} {
		if got := v[key]; len(got) != 1 || math.Abs(got[0]-want) > 1e-9 {
			t.Errorf("%s = %v, want %v", key, got, want)
		}
	}
}

func TestBasePriority(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		want    uint16
		err     bool
	}{
		{"ascending", 0, false},
		{"descending", 0xffff, false},
		{"constant", 100, false},
		{"sideways", 0, true},
	} {
		got, err := basePriority(tc.pattern)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("basePriority(%q) = %d, %v; want %d, err %v", tc.pattern, got, err, tc.want, tc.err)
		}
	}
}

func TestBaseRulesAreDistinctAndEncode(t *testing.T) {
	seen := map[string]int{}
	for i := range 3000 {
		fm := baseRule(i, 7)
		b, err := fm.AppendBinary(nil)
		if err != nil {
			t.Fatalf("rule %d: %v", i, err)
		}
		if fm.Priority != 7 || len(b) != fm.Len() {
			t.Fatalf("rule %d: priority %d, %d bytes for Len %d", i, fm.Priority, len(b), fm.Len())
		}
		k := string(b[8+4 : 8+40]) // the match, past the header and wildcards
		if j, dup := seen[k]; dup {
			t.Fatalf("rules %d and %d share a match", j, i)
		}
		seen[k] = i
	}
}

func TestDefaultsRejectUnsupportedKinds(t *testing.T) {
	if err := (&Config{}).defaults(); err == nil {
		t.Error("no profile accepted")
	}
	p, err := profile.Load("ideal")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		kind string
		ok   bool
	}{{"handshake", true}, {"packet_in", true}, {"data", false}} {
		cfg := Config{Profile: p, Cells: []Cell{{Label: "c", Kind: tc.kind, Flows: 1, Rate: 1, Priority: "ascending"}}}
		err := cfg.defaults()
		if (err == nil) != tc.ok || Supported(tc.kind) != tc.ok {
			t.Errorf("kind %s: defaults error %v, Supported %v; want ok=%v", tc.kind, err, Supported(tc.kind), tc.ok)
		}
		if tc.ok && (!strings.HasPrefix(cfg.Name, "lv") || len(cfg.Name) != 8 || cfg.ProbeTimeout <= 0) {
			t.Errorf("defaults: name %q, probe timeout %v", cfg.Name, cfg.ProbeTimeout)
		}
	}
}

func TestExitedBySignal(t *testing.T) {
	killed := exec.Command("sleep", "10")
	if err := killed.Start(); err != nil {
		t.Skipf("no sleep: %v", err)
	}
	_ = killed.Process.Signal(syscall.SIGTERM)
	failed := exec.Command("false")
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{killed.Wait(), true},
		{failed.Run(), false},
		{errors.New("plain"), false},
		{nil, false},
	} {
		if got := exitedBySignal(tc.err); got != tc.want {
			t.Errorf("exitedBySignal(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
