package probes

import (
	"net/netip"
	"slices"
	"testing"
)

func TestGenerateTuplesDistinctAndDeterministic(t *testing.T) {
	tests := []struct {
		name string
		n    int
		spec TupleSpec
	}{
		{"paper size", 250, TupleSpec{}},
		{"whole port range", portsPerAddr, TupleSpec{}},
		{"spills into next source address", portsPerAddr + 10, TupleSpec{DstPort: 443}},
		{"ipv6", 1000, TupleSpec{Src: netip.MustParseAddr("fd00::1"), Dst: netip.MustParseAddr("fd00::2")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := GenerateTuples(tc.n, tc.spec, 42)
			if err != nil {
				t.Fatal(err)
			}
			if len(a) != tc.n {
				t.Fatalf("got %d tuples", len(a))
			}
			seen := make(map[FiveTuple]bool, tc.n)
			for i, tu := range a {
				if seen[tu] {
					t.Fatalf("tuple %d (%v) repeats", i, tu)
				}
				seen[tu] = true
				if tu.SrcPort < firstEphemeralPort || tu.Proto != ProtoTCP {
					t.Fatalf("tuple %d = %v", i, tu)
				}
			}
			b, _ := GenerateTuples(tc.n, tc.spec, 42)
			if !slices.Equal(a, b) {
				t.Fatal("same seed, different tuples")
			}
			c, _ := GenerateTuples(tc.n, tc.spec, 43)
			if slices.Equal(a, c) {
				t.Fatal("different seed, same tuples")
			}
		})
	}
}

func TestGenerateTuplesDefaults(t *testing.T) {
	ts, err := GenerateTuples(portsPerAddr+1, TupleSpec{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	first, last := ts[0], ts[len(ts)-1]
	if first.SrcIP != netip.MustParseAddr("10.0.0.1") || first.DstIP != netip.MustParseAddr("10.0.0.2") || first.DstPort != 80 {
		t.Fatalf("first tuple %v does not use the defaults", first)
	}
	if last.SrcIP != netip.MustParseAddr("10.0.0.2") {
		t.Fatalf("flow 64512 should move to the next source address, got %v", last)
	}
	if _, err := GenerateTuples(-1, TupleSpec{}, 0); err == nil {
		t.Fatal("negative count accepted")
	}
	if _, err := GenerateTuples(2*portsPerAddr, TupleSpec{Src: netip.MustParseAddr("255.255.255.255")}, 0); err == nil {
		t.Fatal("address overflow not reported")
	}
}

func TestFiveTupleReverse(t *testing.T) {
	tu := FiveTuple{SrcIP: netip.MustParseAddr("10.0.0.1"), DstIP: netip.MustParseAddr("10.0.0.2"), SrcPort: 1234, DstPort: 80, Proto: ProtoTCP}
	r := tu.Reverse()
	if r.SrcPort != 80 || r.DstIP != tu.SrcIP || r.Reverse() != tu {
		t.Fatalf("Reverse = %v", r)
	}
	if got := tu.String(); got != "6 10.0.0.1:1234 -> 10.0.0.2:80" {
		t.Fatalf("String = %q", got)
	}
}
