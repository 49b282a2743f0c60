package flowtable

import (
	"testing"

	"github.com/pseudocong/pseudocong/openflow"
)

func TestMatchTernaryRoundTrip(t *testing.T) {
	cases := []openflow.Match{
		openflow.MatchAll(),
		exactMatch(1, ip(10, 0, 0, 1), ip(10, 0, 0, 2), 1000, 80),
		wildDst(ip(10, 1, 0, 0), 16),
		wildDst(ip(10, 1, 2, 3), 0),
		{Wildcards: openflow.WildcardAll &^ (openflow.WildcardDlVlan | openflow.WildcardDlVlanPcp), DlVlan: 7, DlVlanPcp: 5},
		{Wildcards: openflow.WildcardAll &^ openflow.WildcardNwTos, NwTos: 0xb8},
	}
	for _, m := range cases {
		n := NormalizeMatch(m)
		back := TernaryToMatch(MatchToTernary(m))
		if back != n {
			t.Errorf("round trip of %+v: got %+v want %+v", m, back, n)
		}
	}
}

func TestNormalizeMatch(t *testing.T) {
	m := wildDst(ip(10, 1, 2, 3), 16)
	m.InPort = 9           // wildcarded: must be zeroed
	m.Wildcards |= 1 << 30 // bit outside OFPFW_ALL: dropped
	n := NormalizeMatch(m)
	if n.InPort != 0 || n.NwDst != ip(10, 1, 0, 0) || n.Wildcards&^openflow.WildcardAll != 0 {
		t.Fatalf("normalize: %+v", n)
	}
	// nw_src wildcard count 63 means "all": clamped to 32.
	m2 := openflow.Match{Wildcards: openflow.WildcardAll | 63<<openflow.WildcardNwSrcShift}
	want := openflow.WildcardAll&^(openflow.WildcardNwSrcMask|openflow.WildcardNwDstMask) | openflow.WildcardNwSrcAll | openflow.WildcardNwDstAll
	if got := NormalizeMatch(m2).Wildcards; got != want {
		t.Fatalf("clamp: wildcards %#x", got)
	}
}

func TestEffectivePriority(t *testing.T) {
	exact := exactMatch(1, 1, 2, 3, 4)
	if !IsExact(exact) || EffectivePriority(exact, 0) != 0x10000 {
		t.Fatalf("exact match at priority 0 must map to 0x10000, got %#x", EffectivePriority(exact, 0))
	}
	w := wildDst(1, 32)
	if IsExact(w) || EffectivePriority(w, 0xffff) != 0xffff {
		t.Fatal("wildcard priority must map to itself")
	}
}

func TestCoversAndOverlaps(t *testing.T) {
	all := MatchToTernary(openflow.MatchAll())
	net16 := MatchToTernary(wildDst(ip(10, 1, 0, 0), 16))
	net24 := MatchToTernary(wildDst(ip(10, 1, 2, 0), 24))
	other := MatchToTernary(wildDst(ip(10, 2, 0, 0), 16))
	checks := []struct {
		name                     string
		covers, overlaps         bool
		gotCovers, gotOverlapped bool
	}{
		{"all covers /16", true, true, Covers(&all, &net16), Overlaps(&all, &net16)},
		{"/16 covers /24", true, true, Covers(&net16, &net24), Overlaps(&net16, &net24)},
		{"/24 does not cover /16", false, true, Covers(&net24, &net16), Overlaps(&net24, &net16)},
		{"disjoint /16s", false, false, Covers(&net16, &other), Overlaps(&net16, &other)},
	}
	for _, c := range checks {
		if c.gotCovers != c.covers || c.gotOverlapped != c.overlaps {
			t.Errorf("%s: covers=%v overlaps=%v, want %v %v", c.name, c.gotCovers, c.gotOverlapped, c.covers, c.overlaps)
		}
	}
}
