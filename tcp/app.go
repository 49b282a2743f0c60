package tcp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// The applications drive a connection's sending side through its
// Handlers (so each replaces any handlers set before). All run on the
// connection's clock.

// Bulk keeps the send buffer full for ever, as iperf does.
func Bulk(c *Conn) {
	fill := func() { c.Write(c.SendBufferFree()) }
	c.Handle(Handlers{Established: fill, Writable: fill})
}

// Transfer sends n bytes once; done (if set) gets the time the last byte
// was acknowledged.
func Transfer(c *Conn, n int, done func(at time.Time)) {
	left := n
	write := func() { left -= c.Write(left) }
	finished := false
	c.Handle(Handlers{
		Established: write, Writable: write,
		Acked: func(total uint64) {
			if !finished && total >= uint64(n) {
				finished = true
				if done != nil {
					done(c.clk.Now())
				}
			}
		},
	})
}

// OnePacket is a one-segment flow (the paper's DATA probe): n must fit in
// one segment of the configured MSS.
func OnePacket(c *Conn, n int, done func(at time.Time)) error {
	if n < 1 || n > c.cfg.MSS-12 && c.cfg.Timestamps || n > c.cfg.MSS {
		return fmt.Errorf("tcp: one-packet flow of %d bytes: want 1..one segment", n)
	}
	Transfer(c, n, done)
	return nil
}

// Dist is a distribution to draw sizes or times from.
type Dist interface {
	Sample(r *rand.Rand) float64
}

// Constant always gives V.
type Constant struct{ V float64 }

func (d Constant) Sample(*rand.Rand) float64 { return d.V }

// Exponential has mean Mean.
type Exponential struct{ Mean float64 }

func (d Exponential) Sample(r *rand.Rand) float64 { return r.ExpFloat64() * d.Mean }

// Pareto has scale (minimum) Xm and shape Alpha, optionally truncated at
// Max (the heavy-tailed web object size of SURGE and ns-3's examples).
type Pareto struct{ Xm, Alpha, Max float64 }

func (d Pareto) Sample(r *rand.Rand) float64 {
	u := 1 - r.Float64() // (0, 1]
	v := d.Xm / math.Pow(u, 1/d.Alpha)
	if d.Max > 0 {
		v = min(v, d.Max)
	}
	return v
}

// OnOffConfig is a web-like source: an object of Size bytes, then Think
// seconds of silence once it is acknowledged, repeated Objects times (0:
// for ever), over one persistent connection.
type OnOffConfig struct {
	Size, Think Dist
	Objects     int
	Seed        uint64
}

// ObjectRecord is one object of an on/off source.
type ObjectRecord struct {
	Size       int
	Start, End time.Time // written, fully acknowledged
}

// OnOff runs cfg on c; the returned slice pointer fills as objects finish.
func OnOff(c *Conn, cfg OnOffConfig) *[]ObjectRecord {
	r := rand.New(rand.NewPCG(cfg.Seed, 0x6f6e6f6666)) // "onoff"
	recs := &[]ObjectRecord{}
	var target uint64 // acked total at which the current object is done
	left := 0
	var cur ObjectRecord
	write := func() { left -= c.Write(left) }
	next := func() {
		if cfg.Objects > 0 && len(*recs) >= cfg.Objects {
			return
		}
		n := max(int(cfg.Size.Sample(r)), 1)
		cur = ObjectRecord{Size: n, Start: c.clk.Now()}
		target = c.acked + uint64(c.Unacked()) + uint64(n)
		left = n
		write()
	}
	c.Handle(Handlers{
		Established: next,
		Writable:    write,
		Acked: func(total uint64) {
			if left > 0 || total < target || cur.Size == 0 {
				return
			}
			cur.End = c.clk.Now()
			*recs = append(*recs, cur)
			cur = ObjectRecord{}
			think := time.Duration(cfg.Think.Sample(r) * float64(time.Second))
			c.clk.AfterFunc(think, next)
		},
	})
	return recs
}
