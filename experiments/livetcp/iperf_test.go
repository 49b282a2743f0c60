package livetcp

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/internal/nstat"
)

// The testdata are real iperf3 3.12 runs (Debian's) between two network
// namespaces, the sender's egress a 50 Mbit/s tbf with a 15 kB limit so
// that it loses, server and client with -J -i 0.5, -t 2 -O 1: an upload
// and a download (-R).
func loadIperf(t *testing.T, name string) *iperfJSON {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var j iperfJSON
	if err := json.Unmarshal(b, &j); err != nil {
		t.Fatal(err)
	}
	return &j
}

func TestSeriesFromEachEnd(t *testing.T) {
	for _, c := range []struct {
		file         string
		reverse      bool
		recv, sender int // bins: the server reports 6, the client 5
	}{{"iperf3-up.json", false, 6, 5}, {"iperf3-down.json", true, 5, 6}} {
		t.Run(c.file, func(t *testing.T) {
			j := loadIperf(t, c.file)
			var res Result
			if err := j.series(&res, Iperf{Reverse: c.reverse, Interval: 500 * time.Millisecond}); err != nil {
				t.Fatal(err)
			}
			// Two omitted bins and four measured ones from the server;
			// the client reports one omitted bin fewer.
			if len(res.Series) != c.recv || len(res.RetxSeries) != c.sender {
				t.Fatalf("series %v, retransmissions %v: want %d and %d bins", res.Series, res.RetxSeries, c.recv, c.sender)
			}
			// Every bin is the 50 Mbit/s bottleneck's rate; the
			// client's "seconds" would make its second bin half that.
			for i, v := range res.Series {
				if v < 40 || v > 55 {
					t.Errorf("bin %d: %.1f Mbit/s, want 40–55 (the 50 Mbit/s bottleneck)", i, v)
				}
			}
			// The shallow queue loses in slow start: the sender's
			// first bin has retransmissions, whichever end sent.
			var sum int64
			for _, v := range res.RetxSeries {
				sum += v
			}
			if res.RetxSeries[0] == 0 || sum == 0 {
				t.Errorf("retransmissions per bin %v: want the first > 0", res.RetxSeries)
			}
		})
	}
}

func TestSeriesNeedsServerJSON(t *testing.T) {
	j := loadIperf(t, "iperf3-down.json")
	j.ServerOutput = nil // a server run without -J: its output comes as text
	if err := j.series(&Result{}, Iperf{Reverse: true, Interval: 500 * time.Millisecond}); err == nil {
		t.Fatal("no error without the server's JSON")
	}
}

func TestIperfWholeSeconds(t *testing.T) {
	for _, c := range []struct {
		r  Iperf
		ok bool
	}{
		{Iperf{Duration: 15 * time.Second, Omit: 3 * time.Second}, true},
		{Iperf{Bytes: 1 << 20}, true},
		{Iperf{Duration: 1500 * time.Millisecond}, false},
		{Iperf{Duration: 10 * time.Second, Omit: 500 * time.Millisecond}, false},
	} {
		if err := c.r.check(); (err == nil) != c.ok {
			t.Errorf("%+v: error %v, want ok %v", c.r, err, c.ok)
		}
	}
}

// nstatOut is nstat 6.x's -asz output for mibCounters, as printed here
// (a namespace after one CUBIC run).
const nstatOut = `#kernel
TcpRetransSegs                  27                 0.0
TcpExtTCPRenoRecovery           1                  0.0
TcpExtTCPSackRecovery           10                 0.0
TcpExtTCPHystartTrainDetect     0                  0.0
TcpExtTCPHystartTrainCwnd       0                  0.0
TcpExtTCPHystartDelayDetect     1                  0.0
TcpExtTCPHystartDelayCwnd       50                 0.0
`

func TestSenderMIBAddsUp(t *testing.T) {
	v, err := nstat.Parse([]byte(nstatOut), mibCounters)
	if err != nil {
		t.Fatal(err)
	}
	if m, want := senderMIBOf(v), (senderMIB{retrans: 27, recoveries: 11, hystartExits: 1, hystartCwnd: 50}); m != want {
		t.Errorf("got %+v, want %+v", m, want)
	}
}
