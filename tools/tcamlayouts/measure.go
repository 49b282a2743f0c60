package main

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/pseudocong/pseudocong/tcam"
)

// Patterns of priorities and kinds of rule sets measured.
var (
	patterns = []string{"ascending", "descending", "constant", "random"}
	ruleSets = []string{"overlapping", "disjoint"}
	// bands are the occupancy ranges the table reports moves in.
	bands = [][2]float64{{0, 0.5}, {0.5, 0.9}, {0.9, 1.0}}
)

// result is one (layout, rule set, pattern) run from an empty TCAM to a
// full one.
type result struct {
	Layout, Rules, Pattern string
	Inserts                int
	// BandMoves is the mean moves per insert in each band of bands.
	BandMoves []float64
	MaxMoves  int64
	// MeanLatency and MaxLatency are the inserts' chip plus driver time.
	MeanLatency, MaxLatency time.Duration
	// BackgroundMovesPerInsert is the layout's deferred work (hermes's
	// migrations) per insert; BackgroundTime its total time per insert.
	BackgroundMovesPerInsert float64
	BackgroundTime           time.Duration
	// Refused counts inserts a layout refused with free slots left
	// (ErrNoPlacement); SpaceLost is the share of slots that never held
	// an entry when the TCAM was full (reserved slots).
	Refused   int
	SpaceLost float64
	// Curve is the moves of each insert, for the plot.
	Curve []int64
}

// rule returns rule i of the set: disjoint rules are exact 5-tuples, as
// the per-flow rules of paper 000 are; in the overlapping set even rules
// match one source address and odd ones one destination address, so every
// source rule overlaps every destination rule (each rule depends on half
// the table).
func rule(set string, i int) tcam.Ternary {
	var v, m tcam.Fields
	switch set {
	case "disjoint":
		v = tcam.Fields{DlType: 0x0800, NwProto: 6, NwSrc: 0x0a000000 | uint32(i), NwDst: 0x0a800000 | uint32(i), TpSrc: 1000, TpDst: 80}
		m = tcam.Fields{DlType: 0xffff, NwProto: 0xff, NwSrc: ^uint32(0), NwDst: ^uint32(0), TpSrc: 0xffff, TpDst: 0xffff}
	default:
		if i%2 == 0 {
			v, m = tcam.Fields{DlType: 0x0800, NwSrc: 0x0a000000 | uint32(i)}, tcam.Fields{DlType: 0xffff, NwSrc: ^uint32(0)}
		} else {
			v, m = tcam.Fields{DlType: 0x0800, NwDst: 0x0a800000 | uint32(i)}, tcam.Fields{DlType: 0xffff, NwDst: ^uint32(0)}
		}
	}
	mk := m.Key()
	vk := v.Key()
	return tcam.Ternary{Value: vk.Masked(&mk), Mask: mk}
}

func priority(pattern string, i, n int, rng *rand.Rand) uint32 {
	switch pattern {
	case "ascending":
		return uint32(1 + i)
	case "descending":
		return uint32(n - i)
	case "constant":
		return 100
	default:
		return uint32(rng.IntN(1 << 16))
	}
}

// measure fills an empty TCAM of the given slots to capacity.
func measure(layoutName, set, pattern string, slots int, timing tcam.Timing) (result, error) {
	l, err := tcam.LayoutByName(layoutName)
	if err != nil {
		return result{}, err
	}
	t, err := tcam.New(slots, l, timing)
	if err != nil {
		return result{}, err
	}
	rng := rand.New(rand.NewPCG(1, uint64(len(pattern))))
	r := result{Layout: layoutName, Rules: set, Pattern: pattern, BandMoves: make([]float64, len(bands))}
	bandN := make([]int, len(bands))
	var totalLatency time.Duration
	var bgMoves int64
	n := t.Usable()
	for i := 0; t.Len() < n; i++ {
		if i > 4*slots {
			return r, fmt.Errorf("%s/%s/%s: %d inserts without filling %d slots", layoutName, set, pattern, i, n)
		}
		occ := float64(t.Len()) / float64(slots)
		e := tcam.Entry{Rule: rule(set, i), Priority: priority(pattern, i, slots, rng), ID: uint64(i + 1)}
		c, err := t.Insert(e)
		if err != nil {
			r.Refused++
			continue
		}
		r.Inserts++
		r.Curve = append(r.Curve, c.Moves)
		chip, cpu := timing.Time(c)
		lat := chip + cpu
		totalLatency += lat
		r.MaxLatency = max(r.MaxLatency, lat)
		r.MaxMoves = max(r.MaxMoves, c.Moves)
		for b, band := range bands {
			if occ >= band[0] && (occ < band[1] || b == len(bands)-1) {
				r.BandMoves[b] += float64(c.Moves)
				bandN[b]++
				break
			}
		}
		if t.Pending() {
			bc, err := t.Background()
			if err != nil {
				return r, err
			}
			bgMoves += bc.Moves
			chip, cpu := timing.Time(bc)
			r.BackgroundTime += chip + cpu
		}
	}
	for b := range bands {
		if bandN[b] > 0 {
			r.BandMoves[b] /= float64(bandN[b])
		}
	}
	if r.Inserts > 0 {
		r.MeanLatency = totalLatency / time.Duration(r.Inserts)
		r.BackgroundMovesPerInsert = float64(bgMoves) / float64(r.Inserts)
		r.BackgroundTime /= time.Duration(r.Inserts)
	}
	r.SpaceLost = float64(slots-t.Len()) / float64(slots)
	return r, nil
}
