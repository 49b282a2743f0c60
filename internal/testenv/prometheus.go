package testenv

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Prometheus is a private Prometheus server on a loopback port.
type Prometheus struct {
	// URL is the base URL, e.g. "http://127.0.0.1:PORT".
	URL string
	// Dir holds the config file, the TSDB and prometheus.log.
	Dir string

	client *http.Client
}

// Sample is one element of an instant-vector query result.
type Sample struct {
	Metric map[string]string
	Time   time.Time
	Value  float64
}

// StartPrometheus writes configYAML, starts Prometheus on a free loopback
// port and returns once /-/ready answers. The first scrape result appears
// only ≈ 5–6 s later (service discovery pushes targets every 5 s): use
// WaitQuery, never a fixed sleep. Cleanup stops it and logs its output if
// the test failed.
func StartPrometheus(t testing.TB, configYAML string) *Prometheus {
	t.Helper()
	RequireCommand(t, "prometheus")
	dir := shortTempDir(t, "prom")
	config := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(config, []byte(configYAML), 0o644); err != nil {
		t.Fatalf("prometheus config: %v", err)
	}
	path, err := lookPath("prometheus")
	if err != nil {
		t.Fatalf("prometheus: %v", err)
	}
	logPath := filepath.Join(dir, "prometheus.log")

	port := ReservePort(t) // no retry needed: nothing else may bind it
	p := &Prometheus{
		URL:    fmt.Sprintf("http://127.0.0.1:%d", port),
		Dir:    dir,
		client: &http.Client{Timeout: 5 * time.Second},
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatalf("prometheus log: %v", err)
	}
	cmd := exec.Command(path,
		"--config.file="+config,
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", port))
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		t.Fatalf("start prometheus: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait(); logFile.Close() }()
	if err := p.waitReady(done, 30*time.Second); err != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		t.Fatalf("start prometheus: %v\n%s", err, tailFile(logPath, 20))
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
		if t.Failed() {
			t.Logf("--- last lines of %s ---\n%s", logPath, tailFile(logPath, 40))
		}
	})
	return p
}

// waitReady polls /-/ready until it answers 200 or the process exits.
func (p *Prometheus) waitReady(exited <-chan error, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			return fmt.Errorf("prometheus exited: %v", err)
		default:
		}
		resp, err := p.client.Get(p.URL + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("prometheus not ready after %v", timeout)
}

// Query evaluates an instant query and returns its vector (or the single
// value of a scalar result).
func (p *Prometheus) Query(expr string) ([]Sample, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet,
		p.URL+"/api/v1/query?query="+url.QueryEscape(expr), nil)
	if err != nil {
		return nil, err
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("query %q: %w", expr, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("query %q: %w", expr, err)
	}
	samples, err := parseQueryResponse(body)
	if err != nil {
		return nil, fmt.Errorf("query %q (HTTP %d): %w", expr, resp.StatusCode, err)
	}
	return samples, nil
}

// WaitQuery polls expr every 250 ms until ok accepts the result (ok nil:
// until the result is non-empty) and returns that result.
func (p *Prometheus) WaitQuery(expr string, timeout time.Duration, ok func([]Sample) bool) ([]Sample, error) {
	if ok == nil {
		ok = func(s []Sample) bool { return len(s) > 0 }
	}
	var last []Sample
	err := poll(timeout, 250*time.Millisecond, func() error {
		s, err := p.Query(expr)
		if err != nil {
			return err
		}
		last = s
		if !ok(s) {
			return fmt.Errorf("query %q: condition not met, last result %v", expr, s)
		}
		return nil
	})
	return last, err
}

// parseQueryResponse decodes the /api/v1/query JSON envelope.
func parseQueryResponse(body []byte) ([]Sample, error) {
	var env struct {
		Status    string `json:"status"`
		ErrorType string `json:"errorType"`
		Error     string `json:"error"`
		Data      struct {
			ResultType string          `json:"resultType"`
			Result     json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return nil, fmt.Errorf("decode response: %w", err)
	}
	if env.Status != "success" {
		return nil, fmt.Errorf("%s: %s", env.ErrorType, env.Error)
	}
	switch env.Data.ResultType {
	case "vector":
		var raw []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		}
		if err := json.Unmarshal(env.Data.Result, &raw); err != nil {
			return nil, fmt.Errorf("decode vector: %w", err)
		}
		out := make([]Sample, 0, len(raw))
		for _, r := range raw {
			s, err := decodeSample(r.Metric, r.Value)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	case "scalar":
		var v [2]any
		if err := json.Unmarshal(env.Data.Result, &v); err != nil {
			return nil, fmt.Errorf("decode scalar: %w", err)
		}
		s, err := decodeSample(nil, v)
		if err != nil {
			return nil, err
		}
		return []Sample{s}, nil
	default:
		return nil, fmt.Errorf("unsupported result type %q", env.Data.ResultType)
	}
}

// decodeSample reads the API's [unix_seconds, "value"] pair.
func decodeSample(metric map[string]string, v [2]any) (Sample, error) {
	ts, ok := v[0].(float64)
	if !ok {
		return Sample{}, fmt.Errorf("sample timestamp %v", v[0])
	}
	str, ok := v[1].(string)
	if !ok {
		return Sample{}, fmt.Errorf("sample value %v", v[1])
	}
	val, err := strconv.ParseFloat(str, 64)
	if err != nil {
		return Sample{}, fmt.Errorf("sample value %q: %w", str, err)
	}
	sec := int64(ts)
	return Sample{
		Metric: metric,
		Time:   time.Unix(sec, int64((ts-float64(sec))*1e9)),
		Value:  val,
	}, nil
}

// ScrapeConfig returns a minimal prometheus.yml scraping targets
// ("host:port") as job every interval (at least 1 s).
func ScrapeConfig(job string, interval time.Duration, targets ...string) string {
	if interval < time.Second {
		interval = time.Second
	}
	quoted := make([]string, len(targets))
	for i, tg := range targets {
		quoted[i] = strconv.Quote(tg)
	}
	return fmt.Sprintf(`global:
  scrape_interval: %[2]s
  evaluation_interval: %[2]s
scrape_configs:
  - job_name: %[1]q
    static_configs:
      - targets: [%[3]s]
`, job, interval, strings.Join(quoted, ", "))
}
