package experiments

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Recording time series only reads the model: the summary is the same
// with it as without, the series are the same on a second run, and the
// files are written. On a topology with a slow egress link the series see
// the queue that the link's rate builds.
func TestSeriesOnlyRead(t *testing.T) {
	spec, err := LoadSpec("smoke")
	if err != nil {
		t.Fatal(err)
	}
	off := summaryBytes(t, execute(t, spec, Options{}))
	onRes := execute(t, spec, Options{SeriesInterval: 5 * time.Millisecond})
	if on := summaryBytes(t, onRes); !bytes.Equal(on, off) {
		t.Fatalf("summary with series differs:\n%s\n---\n%s", on, off)
	}
	again := execute(t, spec, Options{SeriesInterval: 5 * time.Millisecond, Workers: 1})
	for i, c := range onRes.Cells {
		s, s2 := c.Outcome.Series, again.Cells[i].Outcome.Series
		if s == nil || len(s.Links) == 0 || len(s.Flows) == 0 {
			t.Fatalf("%s: no series recorded", c.Label())
		}
		if len(s.Links) != len(s2.Links) || len(s.Flows) != len(s2.Flows) || s.Links[len(s.Links)-1] != s2.Links[len(s2.Links)-1] {
			t.Errorf("%s: series differ between two runs", c.Label())
		}
	}
	dir := t.TempDir()
	files, err := WriteOutputs(filepath.Join(dir, "out"), onRes)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"handshake_series_links.csv", "handshake_series_flows.csv", "series_handshake_L500_100pps_ascending_queue.png"} {
		found := false
		for _, f := range files {
			found = found || f == want
		}
		if !found {
			t.Errorf("%s not written (%v)", want, files)
		}
	}
	if off := execute(t, spec, Options{SeriesInterval: -1}); off.Cells[0].Outcome.Series != nil {
		t.Error("a negative interval still recorded series")
	}
}

func TestSeriesSeeTheBottleneck(t *testing.T) {
	spec, err := LoadSpec("smoke")
	if err != nil {
		t.Fatal(err)
	}
	src, err := builtinTopologies.ReadFile("topologies/paper000.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// b's cable at 64 kbit/s (60-byte frames: 7.5 ms each) behind a
	// 4-packet queue: Table 1's 50 packets at 1 000 pps back up and drop.
	slow := strings.Replace(string(src), `{a: b, b: "s1:2"}`, `{a: b, b: "s1:2", rate: 64kbit, qdisc: "droptail,limit=4"}`, 1)
	file := filepath.Join(t.TempDir(), "slow.yaml")
	if err := os.WriteFile(file, []byte(slow), 0o644); err != nil {
		t.Fatal(err)
	}
	spec.Topology = file
	spec.Runs = spec.Runs[:1]
	res := execute(t, spec, Options{SeriesInterval: time.Millisecond})
	var maxQ int
	var drops uint64
	for _, s := range res.Cells[0].Outcome.Series.Links {
		if s.Link == "s1:2>b:eth0" && s.Queue < 0 {
			maxQ = max(maxQ, s.QLen)
			drops += s.Dropped
		}
	}
	if maxQ != 4 || drops == 0 {
		t.Errorf("the slow link's queue peaked at %d packets with %d drops; want its limit 4 and drops", maxQ, drops)
	}
}
