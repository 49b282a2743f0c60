package mptcpgrid

import (
	"strings"
	"testing"
)

func TestSpecFileParses(t *testing.T) {
	s, err := Load("mptcp")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Cells()) != 6*3*10*3 || s.Seeds < 3 {
		t.Fatalf("%d cells, %d seeds: want the paper's 6×3×10×3 grid and several seeds", len(s.Cells()), s.Seeds)
	}
	r := s.Reduce()
	if len(r.Cells()) >= len(s.Cells()) || r.Reduced != nil {
		t.Fatalf("reduced grid %d cells", len(r.Cells()))
	}
}

func TestSpecErrors(t *testing.T) {
	good := `name: x
key_prefix: mptcp
seeds: 1
rate_mbps: 5
queue: 10
duration: 10s
warmup: 1s
delays: [[40, 40]]
loss1_percent: 1
loss2_percent: [1]
buffers_kb: [64]
policies: [rtx-same]
`
	if _, err := Parse([]byte(good), "good"); err != nil {
		t.Fatalf("good spec: %v", err)
	}
	for _, c := range []struct{ from, to, want string }{
		{"seeds: 1", "seeds: 0", "seeds"},
		{"warmup: 1s", "warmup: 20s", "warmup"},
		{"policies: [rtx-same]", "policies: [rtx-nope]", "rtx-nope"},
		{"loss2_percent: [1]", "loss2_percent: [100]", "loss2"},
		{"queue: 10", "queue: 10\nbogus: 1", "bogus"},
		{"buffers_kb: [64]", "buffers_kb: [1]", "buffers_kb"},
	} {
		_, err := Parse([]byte(strings.Replace(good, c.from, c.to, 1)), "bad")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q → %q: error %v, want one naming %q", c.from, c.to, err, c.want)
		}
	}
}
