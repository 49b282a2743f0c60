package tcam

import (
	"math/rand/v2"
	"testing"
)

// ruleShape is one OpenFlow 1.0 wildcard pattern a rule set uses, with the
// share of rules that have it.
type ruleShape struct {
	mask   Fields
	weight int
}

// mixedShapes resembles a proactive table plus reactive microflows: exact
// 12-tuple flows, 5-tuples, L2 forwarding, IP prefixes of several lengths,
// port-based and VLAN rules.
var mixedShapes = []ruleShape{
	{Fields{InPort: 0xffff, DlSrc: allOnesMAC, DlDst: allOnesMAC, DlVlan: 0xffff, DlVlanPcp: 0xff, DlType: 0xffff,
		NwTos: 0xff, NwProto: 0xff, NwSrc: ^uint32(0), NwDst: ^uint32(0), TpSrc: 0xffff, TpDst: 0xffff}, 30},
	{Fields{DlType: 0xffff, NwProto: 0xff, NwSrc: ^uint32(0), NwDst: ^uint32(0), TpSrc: 0xffff, TpDst: 0xffff}, 20},
	{Fields{DlDst: allOnesMAC}, 10},
	{Fields{DlVlan: 0xffff, DlDst: allOnesMAC}, 5},
	{Fields{DlType: 0xffff, NwDst: 0xffffff00}, 10},
	{Fields{DlType: 0xffff, NwDst: 0xffff0000}, 5},
	{Fields{DlType: 0xffff, NwSrc: 0xffffff00}, 5},
	{Fields{DlType: 0xffff, NwSrc: 0xffffff00, NwDst: 0xffffff00}, 5},
	{Fields{DlType: 0xffff, NwProto: 0xff, TpDst: 0xffff}, 5},
	{Fields{InPort: 0xffff}, 3},
	{Fields{InPort: 0xffff, DlSrc: allOnesMAC}, 2},
}

// mixedFields draws packet fields from a population large enough that
// most exact rules are distinct but wildcard rules overlap.
func mixedFields(rng *rand.Rand) Fields {
	mac := func() [6]byte { return [6]byte{0, 0x16, 0x3e, 0, byte(rng.IntN(4)), byte(rng.IntN(256))} }
	return Fields{
		InPort:  uint16(1 + rng.IntN(48)),
		DlSrc:   mac(),
		DlDst:   mac(),
		DlVlan:  []uint16{0xffff, 10, 20}[rng.IntN(3)],
		DlType:  []uint16{0x0800, 0x0800, 0x0800, 0x0806}[rng.IntN(4)],
		NwProto: []uint8{6, 6, 17}[rng.IntN(3)],
		NwSrc:   0x0a000000 | uint32(rng.IntN(1<<16)),
		NwDst:   0x0a000000 | uint32(rng.IntN(1<<16)),
		TpSrc:   uint16(1024 + rng.IntN(60000)),
		TpDst:   []uint16{22, 53, 80, 443, 8080}[rng.IntN(5)],
	}
}

// mixedRules builds n rules over mixedShapes with priorities spread over
// 0..999 (exact 12-tuple rules in the band above 0xffff, as the switch
// maps them).
func mixedRules(rng *rand.Rand, n int) []Entry {
	total := 0
	for _, s := range mixedShapes {
		total += s.weight
	}
	out := make([]Entry, 0, n)
	for i := range n {
		w := rng.IntN(total)
		shape := 0
		for ; w >= mixedShapes[shape].weight; shape++ {
			w -= mixedShapes[shape].weight
		}
		m := mixedShapes[shape].mask.Key()
		v := mixedFields(rng).Key()
		prio := uint32(rng.IntN(1000))
		if shape == 0 {
			prio += 0x10000
		}
		out = append(out, Entry{Rule: Ternary{Value: v.Masked(&m), Mask: m}, Priority: prio, ID: uint64(i + 1)})
	}
	return out
}

// mixedPackets returns n packets, half aimed at a random rule, half random.
func mixedPackets(rng *rand.Rand, rules []Entry, n int) []Key {
	keys := make([]Key, n)
	for i := range keys {
		k := mixedFields(rng).Key()
		if i%2 == 0 {
			r := rules[rng.IntN(len(rules))].Rule
			for w := range k {
				k[w] = k[w]&^r.Mask[w] | r.Value[w]
			}
		}
		keys[i] = k
	}
	return keys
}

func benchClassifier(b *testing.B, cacheSlots int, distinctKeys int) {
	rng := rand.New(rand.NewPCG(1, 2))
	rules := mixedRules(rng, 4000)
	c := NewClassifier(LowerIDWins, cacheSlots)
	for _, e := range rules {
		if err := c.Insert(e); err != nil {
			b.Fatal(err)
		}
	}
	keys := mixedPackets(rng, rules, distinctKeys)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		c.Lookup(keys[i%len(keys)])
	}
	b.StopTimer()
	st := c.Stats()
	b.ReportMetric(float64(st.Probes)/float64(st.Lookups), "probes/lookup")
	b.ReportMetric(float64(c.Subtables()), "subtables")
}

// BenchmarkClassifierLookup4000: 4 000 mixed wildcard rules, no cache,
// many distinct packets: the cost of the tuple-space search itself.
func BenchmarkClassifierLookup4000(b *testing.B) { benchClassifier(b, 0, 4096) }

// BenchmarkClassifierLookupCached: the same table behind an exact-match
// cache, with a working set of packets that fits in it.
func BenchmarkClassifierLookupCached(b *testing.B) { benchClassifier(b, 8192, 1024) }

// BenchmarkInsertCost4000: pricing one insert into a 4 000-entry
// highest-first TCAM filled in ascending priority (the paper's worst case).
func BenchmarkInsertCost4000(b *testing.B) {
	tc, err := New(4000, HighestFirst(), Pica8Timing())
	if err != nil {
		b.Fatal(err)
	}
	for i := range 3999 {
		if _, err := tc.Insert(Entry{Priority: uint32(2 * i), ID: uint64(i)}); err != nil {
			b.Fatal(err)
		}
	}
	probes := []Entry{{Priority: 1 << 20, ID: 1 << 40}, {Priority: 3999, ID: 1 << 40}, {Priority: 0, ID: 1 << 40}}
	b.ReportAllocs()
	var moves int64
	for i := 0; b.Loop(); i++ {
		c, err := tc.InsertCost(probes[i%len(probes)])
		if err != nil {
			b.Fatal(err)
		}
		moves += c.Moves
	}
	if moves == 0 {
		b.Fatal("no moves priced")
	}
}

// BenchmarkTCAMInsertAscending: the model's own cost of filling a
// 4 000-slot highest-first TCAM in ascending priority (8 million moves).
func BenchmarkTCAMInsertAscending(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		tc, err := New(4000, HighestFirst(), Pica8Timing())
		if err != nil {
			b.Fatal(err)
		}
		for i := range 4000 {
			if _, err := tc.Insert(Entry{Priority: uint32(i), ID: uint64(i)}); err != nil {
				b.Fatal(err)
			}
		}
		if got, want := tc.Total().Moves, int64(4000*3999/2); got != want {
			b.Fatalf("moves %d, want %d", got, want)
		}
	}
}

// BenchmarkTCAMLookup4000 is the model's linear scan, for comparison with
// the classifier: this is what the live path must not do per packet.
func BenchmarkTCAMLookup4000(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	rules := mixedRules(rng, 4000)
	tc, err := New(4000, HighestFirst(), Pica8Timing())
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range rules {
		if _, err := tc.Insert(e); err != nil {
			b.Fatal(err)
		}
	}
	keys := mixedPackets(rng, rules, 4096)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		tc.Lookup(keys[i%len(keys)])
	}
}
