package deploy

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pseudocong/pseudocong/agent"
	"github.com/pseudocong/pseudocong/controller"
	"github.com/pseudocong/pseudocong/probes/probemetrics"
	"github.com/pseudocong/pseudocong/softswitch"
	"github.com/pseudocong/pseudocong/softswitch/afport"
	"github.com/pseudocong/pseudocong/softswitch/dataplane"
)

// metricInfo is what the code registers under one name.
type metricInfo struct {
	labels    []string
	histogram bool
}

// describingRegisterer records every metric a package registers, from
// its descriptors: unlike Gather, this also sees vectors that have no
// children yet.
type describingRegisterer struct {
	metrics map[string]metricInfo
}

var (
	fqNameRE = regexp.MustCompile(`^Desc\{fqName: "([^"]+)"`)
	varLblRE = regexp.MustCompile(`variableLabels: \{([^}]*)\}\}$`)
)

func (r *describingRegisterer) Register(c prometheus.Collector) error {
	hist := false
	switch c.(type) {
	case prometheus.Histogram, *prometheus.HistogramVec:
		hist = true
	}
	ch := make(chan *prometheus.Desc, 64)
	go func() { c.Describe(ch); close(ch) }()
	for d := range ch {
		s := d.String()
		m := fqNameRE.FindStringSubmatch(s)
		if m == nil {
			continue
		}
		info := metricInfo{histogram: hist}
		if l := varLblRE.FindStringSubmatch(s); l != nil && l[1] != "" {
			for _, name := range strings.Split(l[1], ",") {
				info.labels = append(info.labels, strings.TrimSuffix(strings.TrimPrefix(name, "c("), ")"))
			}
		}
		r.metrics[m[1]] = info
	}
	return nil
}

func (r *describingRegisterer) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		_ = r.Register(c)
	}
}

func (r *describingRegisterer) Unregister(prometheus.Collector) bool { return true }

// registeredMetrics instantiates the metrics of every process a live run
// has: controller, switch core, data plane (TCAM), agent, Linux ports,
// probes.
func registeredMetrics(t *testing.T) map[string]metricInfo {
	t.Helper()
	r := &describingRegisterer{metrics: map[string]metricInfo{}}
	if _, err := controller.NewMetrics(r); err != nil {
		t.Fatalf("controller metrics: %v", err)
	}
	if _, err := softswitch.NewMetrics(r); err != nil {
		t.Fatalf("switch metrics: %v", err)
	}
	if _, err := dataplane.NewMetrics(r); err != nil {
		t.Fatalf("data plane metrics: %v", err)
	}
	if _, err := agent.NewMetrics(r); err != nil {
		t.Fatalf("agent metrics: %v", err)
	}
	if _, err := probemetrics.New(r); err != nil {
		t.Fatalf("probe metrics: %v", err)
	}
	if _, err := afport.NewMetrics(r); err != nil {
		t.Fatalf("afport metrics: %v", err)
	}
	return r.metrics
}

// dashboardExprs returns every PromQL expression of the dashboard, by
// panel title.
func dashboardExprs(t *testing.T) map[string][]string {
	t.Helper()
	b, err := os.ReadFile("grafana/dashboards/pseudocong.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		UID    string `json:"uid"`
		Panels []struct {
			Title   string `json:"title"`
			Type    string `json:"type"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("dashboard JSON: %v", err)
	}
	if d.UID == "" {
		t.Error("dashboard has no uid (provisioning needs a stable one)")
	}
	out := map[string][]string{}
	for _, p := range d.Panels {
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no queries", p.Title)
		}
		for _, tg := range p.Targets {
			out[p.Title] = append(out[p.Title], tg.Expr)
		}
	}
	return out
}

var (
	metricRE  = regexp.MustCompile(`\bpseudocong_[a-z0-9_]+`)
	byRE      = regexp.MustCompile(`\bby \(([^)]*)\)`)
	matcherRE = regexp.MustCompile(`([a-z_]+)=~?"`)
)

// resolve maps a name used in PromQL to the registered metric: histograms
// are queried through their _bucket, _sum and _count series.
func resolve(name string, reg map[string]metricInfo) (string, bool) {
	if _, ok := reg[name]; ok {
		return name, true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok {
			if info, ok := reg[base]; ok && info.histogram {
				return base, true
			}
		}
	}
	return "", false
}

// The dashboard panels the issue asks for must exist, and every metric and
// label they query must be registered by the code. A failure lists every
// missing name at once.
func TestDashboardMetricsExist(t *testing.T) {
	reg := registeredMetrics(t)
	exprs := dashboardExprs(t)

	var missing, badLabels []string
	used := map[string]bool{}
	for title, list := range exprs {
		for _, expr := range list {
			var labels []string
			for _, name := range metricRE.FindAllString(expr, -1) {
				base, ok := resolve(name, reg)
				if !ok {
					missing = append(missing, name+" (panel "+title+")")
					continue
				}
				used[base] = true
				labels = append(labels, reg[base].labels...)
				if reg[base].histogram {
					labels = append(labels, "le")
				}
			}
			var asked []string
			for _, m := range byRE.FindAllStringSubmatch(expr, -1) {
				for _, l := range strings.Split(m[1], ",") {
					asked = append(asked, strings.TrimSpace(l))
				}
			}
			for _, m := range matcherRE.FindAllStringSubmatch(expr, -1) {
				asked = append(asked, m[1])
			}
			for _, l := range asked {
				if l == "job" || l == "instance" || l == "component" {
					continue // added by Prometheus / the scrape config
				}
				if len(labels) > 0 && !slices.Contains(labels, l) {
					badLabels = append(badLabels, l+" in "+expr)
				}
			}
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("the dashboard queries %d metric(s) the code does not register:\n  %s",
			len(missing), strings.Join(missing, "\n  "))
	}
	if len(badLabels) > 0 {
		t.Errorf("the dashboard uses labels the metrics do not have:\n  %s", strings.Join(badLabels, "\n  "))
	}

	// The panels the issue names, by the metric that carries them.
	for _, want := range []string{
		"pseudocong_controller_packet_in_handling_seconds", // Packet-In → FLOW_MOD latency
		"pseudocong_tcam_insert_latency_seconds",           // TCAM insert latency
		"pseudocong_tcam_entries",                          // TCAM occupancy
		"pseudocong_agent_queue_depth",                     // agent queue depth
		"pseudocong_agent_packet_in_batch_size",            // batch sizes
		"pseudocong_probe_rtt_seconds",                     // RTT percentiles and timer-bin shares
	} {
		if !used[want] {
			t.Errorf("no dashboard panel queries %s", want)
		}
	}
}

// The resolver must not accept what it should reject, or the test above
// could never fail.
func TestResolveRejects(t *testing.T) {
	reg := map[string]metricInfo{
		"pseudocong_a_seconds": {histogram: true},
		"pseudocong_b_total":   {},
	}
	tests := []struct {
		name string
		ok   bool
	}{
		{"pseudocong_a_seconds", true},
		{"pseudocong_a_seconds_bucket", true},
		{"pseudocong_a_seconds_count", true},
		{"pseudocong_b_total", true},
		{"pseudocong_b_total_bucket", false}, // not a histogram
		{"pseudocong_c_total", false},
	}
	for _, tt := range tests {
		if _, ok := resolve(tt.name, reg); ok != tt.ok {
			t.Errorf("resolve(%q) = %v, want %v", tt.name, ok, tt.ok)
		}
	}
}
