package tcp

import (
	"bytes"
	"encoding/csv"
	"testing"
	"time"
)

// TestTracer: samples every interval, the CSV has a row per sample, and a
// timeout shows as time at cwnd 1.
func TestTracer(t *testing.T) {
	ca := testConfig()
	ca.FRTO = false
	p := newPipe(t, ca, testConfig(), 10*time.Millisecond)
	p.rate = 10_000_000
	// Lose the whole first flight's tail, so only the RTO repairs it and
	// the window sits at 1 for a while.
	p.filter = dropOriginals(6, 7, 8, 9)
	tr := NewTracer("a", p.a, 5*time.Millisecond)
	p.transfer(10*1448, 10*time.Second)
	tr.Stop()
	if n := len(tr.Samples); n < 50 {
		t.Fatalf("%d samples", n)
	}
	if st := p.a.Stats(); st.TCPTimeouts == 0 {
		t.Fatalf("no timeout: %+v", st)
	}
	at, share := tr.TimeAtCwnd(1)
	if at <= 0 || share <= 0 || share >= 1 {
		t.Errorf("time at cwnd 1: %v (%.2f)", at, share)
	}
	var buf bytes.Buffer
	if err := WriteCSV(&buf, []*Trace{&tr.Trace}); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(tr.Samples)+1 || rows[0][2] != "cwnd" {
		t.Errorf("%d rows for %d samples, header %v", len(rows), len(tr.Samples), rows[0])
	}
	p2, err := PlotSeries("cwnd", "segments", []*Trace{&tr.Trace}, func(s Sample) float64 { return float64(s.Cwnd) })
	if err != nil {
		t.Fatal(err)
	}
	var png bytes.Buffer
	if err := WritePNG(&png, p2); err != nil || !bytes.HasPrefix(png.Bytes(), []byte("\x89PNG")) {
		t.Errorf("png: %v", err)
	}
}
