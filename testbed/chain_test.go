package testbed

import (
	"slices"
	"testing"
)

func TestChainSwitchPorts(t *testing.T) {
	topo := &Topology{Name: "pc", Hosts: []Host{hostSpec("pc", 1), hostSpec("pc", 2)}}
	if got := topo.ChainSwitchPorts(); len(got) != 1 || !slices.Equal(got[0], []string{"pc-s1", "pc-s2"}) {
		t.Fatalf("no chain: %v", got)
	}
	for i := 1; i <= 2; i++ {
		a, b := ChainLinkNames("pc", i)
		topo.Chain = append(topo.Chain, ChainLink{Index: i, A: a, B: b})
	}
	want := [][]string{{"pc-s1", "pc-l1a"}, {"pc-l1b", "pc-l2a"}, {"pc-l2b", "pc-s2"}}
	got := topo.ChainSwitchPorts()
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("chain of 3: %v, want %v", got, want)
	}
}

func TestChainLinkNames(t *testing.T) {
	long := "abcdefghij"
	a, b := ChainLinkNames(long, MaxChain-1)
	if len(a) > 15 || len(b) > 15 {
		t.Fatalf("%s / %s longer than IFNAMSIZ-1", a, b)
	}
	for _, tt := range []struct {
		s   string
		i   int
		end byte
		ok  bool
	}{
		{"pc-l1a", 1, 'a', true}, {"pc-l15b", 15, 'b', true},
		{"pc-l16a", 0, 0, false}, {"pc-l0a", 0, 0, false}, {"pc-l01a", 0, 0, false},
		{"pc-l1c", 0, 0, false}, {"pc-s1", 0, 0, false}, {"pcx-l1a", 0, 0, false}, {"pc-la", 0, 0, false},
	} {
		i, end, ok := parseChainLink(tt.s, "pc")
		if ok != tt.ok || ok && (i != tt.i || end != tt.end) {
			t.Errorf("parseChainLink(%q) = %d %c %v, want %d %c %v", tt.s, i, end, ok, tt.i, tt.end, tt.ok)
		}
	}
}
