package experiments

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The whole paper spec, end to end: every key of the summary.json contract
// is there with a value of the right shape, every output file is written,
// and the report explains every miss. It takes a few seconds.
func TestPaperSpecOutputs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole paper spec")
	}
	spec, err := LoadSpec("paper")
	if err != nil {
		t.Fatal(err)
	}
	res := execute(t, spec, Options{})
	dir := t.TempDir()
	files, err := WriteOutputs(dir, res)
	if err != nil {
		t.Fatal(err)
	}

	raw, err := os.ReadFile(filepath.Join(dir, SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Spec, Backend, Profile string
		Seed                   uint64
		WallSeconds            float64 `json:"wall_seconds"`
		Results, Paper         map[string]any
	}
	if err := json.Unmarshal(raw, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Spec != "paper" || sum.Backend != "sim" || sum.Profile != "pica8-p3297" || sum.Seed != 1 || sum.WallSeconds <= 0 {
		t.Errorf("header %+v", sum)
	}
	rates := []string{"10", "100", "1000", "5000"}
	var want []string
	for _, r := range rates {
		for _, m := range []string{"max_delay_s", "mean_delay_s", "controller_mean_s"} {
			want = append(want, "table1."+m+"."+r+"pps")
		}
		for _, l := range []string{"500", "2000", "3500"} {
			want = append(want, "handshake.bins.L"+l+"."+r+"pps", "handshake.max_rtt_s.L"+l+"."+r+"pps")
		}
		for _, l := range []string{"2500", "3500"} {
			want = append(want, "data.share_gt_1.5s.L"+l+"."+r+"pps", "data.max_rtt_s.L"+l+"."+r+"pps")
		}
	}
	for _, p := range []string{"ascending", "descending", "constant"} {
		want = append(want, "fig5.max_delay_s."+p)
	}
	for _, k := range want {
		v, ok := sum.Results[k]
		if !ok {
			t.Errorf("results lack %s", k)
			continue
		}
		if strings.Contains(k, ".bins.") {
			arr, ok := v.([]any)
			if !ok || len(arr) != 4 {
				t.Errorf("%s = %v, want four shares", k, v)
				continue
			}
			total := 0.0
			for _, x := range arr {
				total += x.(float64)
			}
			if total < 0.999 || total > 1.001 {
				t.Errorf("%s shares sum to %v", k, total)
			}
		} else if _, ok := v.(float64); !ok {
			t.Errorf("%s = %v, want a number", k, v)
		}
	}
	if len(sum.Paper) != len(PaperNumbers()) {
		t.Errorf("paper holds %d values, want %d", len(sum.Paper), len(PaperNumbers()))
	}

	for _, f := range []string{ReportFile, "table1.csv", "table1_controller.csv", "fig5.csv", "fig6_8.csv",
		"handshake.csv", "data.csv", "table1.png", "fig5.png", "fig6_8_ascending.png",
		"handshake_L3500_hist.png", "handshake_10pps_rtt.png", "data_L3500_hist.png"} {
		found := false
		for _, g := range files {
			found = found || g == f
		}
		if st, err := os.Stat(filepath.Join(dir, f)); !found || err != nil || st.Size() == 0 {
			t.Errorf("output %s missing or empty (listed %v, err %v)", f, found, err)
		}
	}
	// Every sample is in the CSVs: one row per flow of every cell, plus
	// the header.
	csvRows := func(name string) int {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(string(b), "\n")
	}
	if n := csvRows("handshake.csv"); n != 1+12*250 {
		t.Errorf("handshake.csv has %d lines, want %d", n, 1+12*250)
	}
	if n := csvRows("fig5.csv"); n != 1+3*4000 {
		t.Errorf("fig5.csv has %d lines, want %d", n, 1+3*4000)
	}

	report, err := os.ReadFile(filepath.Join(dir, ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Compare() {
		if c.Within {
			continue
		}
		if c.Note == "" || !strings.Contains(string(report), c.Note) {
			t.Errorf("miss %s is not explained in the report", c.Key)
		}
	}
}
