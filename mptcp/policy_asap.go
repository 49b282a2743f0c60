package mptcp

import "math/rand/v2"

// ASAP is RTX-ASAP: any subflow whose congestion window has space now,
// chosen at random; if none has, any usable subflow at random.
type ASAP struct{}

func (ASAP) Name() string { return "rtx-asap" }

func (ASAP) Pick(timedOut int, subs []Subflow, rng *rand.Rand) int {
	var room, usable []int
	for i := range subs {
		if !subs[i].Usable {
			continue
		}
		usable = append(usable, i)
		if subs[i].Space > 0 {
			room = append(room, i)
		}
	}
	switch {
	case len(room) > 0:
		return room[rng.IntN(len(room))]
	case len(usable) > 0:
		return usable[rng.IntN(len(usable))]
	}
	return timedOut
}
