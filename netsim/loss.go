package netsim

import (
	"fmt"
	"math/rand/v2"
)

// LossModel decides, packet by packet, whether the wire loses a packet.
// Models are seeded: a run is reproducible.
type LossModel interface {
	Lose(p *Packet) bool
}

func newRNG(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

func checkProb(what string, p float64) error {
	if !(p >= 0 && p <= 1) { // also refuses NaN
		return fmt.Errorf("netsim: %s %v: want a probability in [0, 1]", what, p)
	}
	return nil
}

// Bernoulli loses each packet independently with probability P.
type Bernoulli struct {
	p   float64
	rng *rand.Rand
}

func NewBernoulli(p float64, seed uint64) (*Bernoulli, error) {
	if err := checkProb("bernoulli: loss", p); err != nil {
		return nil, err
	}
	return &Bernoulli{p: p, rng: newRNG(seed)}, nil
}

func (b *Bernoulli) Lose(*Packet) bool { return b.rng.Float64() < b.p }

// GilbertElliottConfig is the two-state burst-loss channel: a Good and a
// Bad state, each with its own loss probability, and per-packet transition
// probabilities between them.
type GilbertElliottConfig struct {
	P        float64 // Good → Bad, per packet
	R        float64 // Bad → Good, per packet
	LossGood float64 // loss probability in Good (1 − k); 0 in Gilbert's model
	LossBad  float64 // loss probability in Bad (1 − h); 1 in Gilbert's model
	Seed     uint64
}

// StationaryLoss is the long-run loss rate: the chain spends R/(P+R) of
// the packets in Good and P/(P+R) in Bad.
func (c GilbertElliottConfig) StationaryLoss() float64 {
	return (c.R*c.LossGood + c.P*c.LossBad) / (c.P + c.R)
}

// GilbertElliott decides each packet's fate in the current state, then
// moves the chain one step. It starts in Good.
type GilbertElliott struct {
	c   GilbertElliottConfig
	bad bool
	rng *rand.Rand
}

func NewGilbertElliott(c GilbertElliottConfig) (*GilbertElliott, error) {
	for _, f := range []struct {
		what string
		p    float64
	}{{"gilbert-elliott: p", c.P}, {"gilbert-elliott: r", c.R}, {"gilbert-elliott: loss in good", c.LossGood}, {"gilbert-elliott: loss in bad", c.LossBad}} {
		if err := checkProb(f.what, f.p); err != nil {
			return nil, err
		}
	}
	if c.P+c.R == 0 {
		return nil, fmt.Errorf("netsim: gilbert-elliott: p and r both 0: the chain never moves, use Bernoulli")
	}
	return &GilbertElliott{c: c, rng: newRNG(c.Seed)}, nil
}

func (g *GilbertElliott) Lose(*Packet) bool {
	loss := g.c.LossGood
	if g.bad {
		loss = g.c.LossBad
	}
	lost := g.rng.Float64() < loss
	if g.bad {
		g.bad = g.rng.Float64() >= g.c.R
	} else {
		g.bad = g.rng.Float64() < g.c.P
	}
	return lost
}

// Bad reports whether the chain is in the Bad state.
func (g *GilbertElliott) Bad() bool { return g.bad }
