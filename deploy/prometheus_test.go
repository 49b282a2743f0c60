package deploy

import (
	"os"
	"os/exec"
	"slices"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/pseudocong/pseudocong/internal/testenv"
)

// The metrics ports of deploy/prometheus/prometheus.yml, the convention
// the systemd units and docs/real-switch.md follow.
const (
	controllerMetrics = "127.0.0.1:9101"
	switchMetrics     = "127.0.0.1:9102"
	probeMetrics      = "127.0.0.1:9103"
	responderMetrics  = "127.0.0.1:9104"
)

func TestPrometheusConfigScrapesEveryProcess(t *testing.T) {
	b, err := os.ReadFile("prometheus/prometheus.yml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		ScrapeConfigs []struct {
			JobName       string `yaml:"job_name"`
			StaticConfigs []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
		} `yaml:"scrape_configs"`
	}
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatalf("prometheus.yml: %v", err)
	}
	got := map[string][]string{}
	for _, sc := range cfg.ScrapeConfigs {
		for _, st := range sc.StaticConfigs {
			got[sc.JobName] = append(got[sc.JobName], st.Targets...)
		}
	}
	want := map[string]string{
		"pseudocong-controller": controllerMetrics,
		"pseudocong-switch":     switchMetrics,
		"pseudocong-probe":      probeMetrics,
		"pseudocong-responder":  responderMetrics,
	}
	for job, target := range want {
		if !slices.Contains(got[job], target) {
			t.Errorf("job %s scrapes %v, want %s", job, got[job], target)
		}
	}
}

// promtool (Debian's prometheus package) accepts the config.
func TestPrometheusConfigPassesPromtool(t *testing.T) {
	testenv.RequireCommand(t, "promtool")
	out, err := exec.Command("promtool", "check", "config", "prometheus/prometheus.yml").CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check config: %v\n%s", err, out)
	}
}
