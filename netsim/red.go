package netsim

import (
	"fmt"
	"math"
	"time"
)

// REDConfig configures Random Early Detection as tc-red does (Floyd &
// Jacobson 1993, Linux include/net/red.h). Sizes are bytes, as in tc: the
// average queue is kept over the byte backlog.
type REDConfig struct {
	// Limit is the hard byte limit of the queue: a packet that would pass
	// it is dropped whatever the average says (tc "limit").
	Limit int
	// Min and Max are the thresholds on the average queue, in bytes.
	// Below Min nothing is marked; from Max up every packet is.
	Min, Max int
	// MaxP is the marking probability at Max (tc "probability"); 0 means
	// tc's default 0.02.
	MaxP float64
	// Avpkt is the typical packet size in bytes: it sets the EWMA weight
	// with Burst and the idle decay with Bandwidth.
	Avpkt int
	// Burst is how many avpkt-sized packets may arrive back to back into
	// an empty queue before the average reaches Min; it sets the weight as
	// tc does. 0 means tc's default (2·Min + Max) / (3·Avpkt).
	Burst int
	// Weight, if set, is the EWMA weight w_q in (0, 1] instead of the one
	// derived from Burst; 1 makes the average the instantaneous backlog.
	Weight float64
	// Bandwidth in bits/s is the drain rate assumed while the queue is
	// idle: the average decays as if an avpkt-sized packet of zero length
	// arrived every Avpkt·8/Bandwidth (the paper's m). 0 means tc's
	// default 10 Mbit/s.
	Bandwidth int64
	// ECN marks ECN-capable packets CE instead of dropping them; non-ECT
	// packets are still dropped.
	ECN bool
	// HardDrop drops even ECT packets once the average is at Max or above
	// (tc "harddrop"); without it, ECN marks there as well.
	HardDrop bool
	// Seed seeds the PCG generator the marking decisions draw from: a run
	// is reproducible.
	Seed uint64
}

// REDStats split RED's decisions the way tc -s shows them.
type REDStats struct {
	ProbDrop, ProbMark     uint64 // between Min and Max
	ForcedDrop, ForcedMark uint64 // at or above Max
	PDrop                  uint64 // over the hard Limit
}

// RED is a FIFO that drops or marks arriving packets with a probability
// rising with the average queue.
//
// The marking decision follows Linux red_action: rather than drawing a
// coin with p_a = p_b / (1 − count·p_b) at every packet, it draws one
// uniform R after each mark and marks the first packet whose count·p_b ≥ R.
// Both give the same law (the gap between marks is uniform on
// 1..1/p_b, the paper's section 7); this one needs one draw per mark.
type RED struct {
	cfg  REDConfig
	w    float64 // EWMA weight
	xmit float64 // ns to send one avpkt at Bandwidth: the idle decay's unit
	rng  interface{ Float64() float64 }

	q         fifo
	avg       float64 // average backlog, bytes
	count     int     // packets since the last mark; -1 outside (Min, Max)
	r         float64 // the current mark's uniform draw
	idle      bool
	idleSince time.Time

	stats Stats
	red   REDStats
}

func NewRED(c REDConfig) (*RED, error) {
	if c.MaxP == 0 {
		c.MaxP = 0.02
	}
	if c.Bandwidth == 0 {
		c.Bandwidth = 10_000_000
	}
	switch {
	case c.Min <= 0 || c.Max <= c.Min:
		return nil, fmt.Errorf("netsim: red: thresholds min %d max %d bytes: want 0 < min < max", c.Min, c.Max)
	case c.Limit < c.Max:
		return nil, fmt.Errorf("netsim: red: limit %d bytes below max %d: the average could never reach max", c.Limit, c.Max)
	case c.MaxP <= 0 || c.MaxP > 1:
		return nil, fmt.Errorf("netsim: red: probability %v: want (0, 1]", c.MaxP)
	case c.Avpkt <= 0:
		return nil, fmt.Errorf("netsim: red: avpkt %d bytes: want a positive packet size", c.Avpkt)
	case c.Bandwidth < 0:
		return nil, fmt.Errorf("netsim: red: bandwidth %d bit/s: want a positive rate", c.Bandwidth)
	case c.Weight < 0 || c.Weight > 1:
		return nil, fmt.Errorf("netsim: red: weight %v: want (0, 1]", c.Weight)
	}
	if c.Burst == 0 {
		c.Burst = (2*c.Min + c.Max) / (3 * c.Avpkt)
	}
	w := c.Weight
	if w == 0 {
		wlog, err := REDWlog(c.Min, c.Burst, c.Avpkt)
		if err != nil {
			return nil, err
		}
		w = math.Ldexp(1, -wlog)
	}
	return &RED{
		cfg:   c,
		w:     w,
		xmit:  float64(c.Avpkt) * 8 * 1e9 / float64(c.Bandwidth),
		rng:   newRNG(c.Seed),
		count: -1,
		idle:  true,
	}, nil
}

// REDWlog is tc_red_eval_ewma: the smallest Wlog (weight 2^-Wlog) for
// which burst avpkt-sized packets arriving into an empty queue leave the
// average below min. With weight W, after n back-to-back packets the
// average of a queue growing one avpkt per packet is below
// avpkt·(n + 1 − (1 − (1−W)^n)/W); tc asks that to stay under min for
// n = burst.
func REDWlog(min, burst, avpkt int) (int, error) {
	a := float64(burst) + 1 - float64(min)/float64(avpkt)
	if a < 1 {
		return 0, fmt.Errorf("netsim: red: burst %d packets too small for min %d bytes / avpkt %d: want burst ≥ %d", burst, min, avpkt, 1+min/avpkt)
	}
	W := 0.5
	for wlog := 1; wlog < 32; wlog++ {
		if a <= (1-math.Pow(1-W, float64(burst)))/W {
			return wlog, nil
		}
		W /= 2
	}
	return 0, fmt.Errorf("netsim: red: no EWMA weight fits burst %d, min %d, avpkt %d", burst, min, avpkt)
}

// Weight is the EWMA weight in force.
func (r *RED) Weight() float64 { return r.w }

// Average is the current average backlog in bytes.
func (r *RED) Average() float64 { return r.avg }

// ProbB is RED's base probability p_b at average avg: 0 below Min,
// MaxP·(avg − Min)/(Max − Min) between, 1 from Max up (where every packet
// is marked).
func (r *RED) ProbB(avg float64) float64 {
	c := &r.cfg
	switch {
	case avg < float64(c.Min):
		return 0
	case avg >= float64(c.Max):
		return 1
	}
	return c.MaxP * (avg - float64(c.Min)) / float64(c.Max-c.Min)
}

func (r *RED) Enqueue(p *Packet, now time.Time) Verdict {
	r.average(now)
	mark, forced := r.decide()
	v := Queued
	if mark {
		if r.cfg.ECN && p.ECN.ECT() && !(forced && r.cfg.HardDrop) {
			v = Marked
		} else {
			if forced {
				r.red.ForcedDrop++
			} else {
				r.red.ProbDrop++
			}
			r.stats.dropped(p)
			return Dropped
		}
	}
	if r.q.bytes+p.Len > r.cfg.Limit {
		r.red.PDrop++
		r.stats.dropped(p)
		return Dropped
	}
	if v == Marked {
		if forced {
			r.red.ForcedMark++
		} else {
			r.red.ProbMark++
		}
		p.ECN = CE
		r.stats.marked(p)
	}
	r.q.push(p)
	r.stats.enqueued(p)
	return v
}

// average updates the EWMA at an arrival. After an idle period the paper
// and tc decay it as if m packets of size zero had arrived, m being how
// many avpkt-sized packets the link could have sent meanwhile.
func (r *RED) average(now time.Time) {
	if r.idle {
		r.idle = false
		if !r.idleSince.IsZero() {
			m := float64(now.Sub(r.idleSince)) / r.xmit
			r.avg *= math.Pow(1-r.w, m)
		}
		return
	}
	r.avg += r.w * (float64(r.q.bytes) - r.avg)
}

// decide is red_action: whether to mark the arriving packet, and whether
// that is a forced mark (average at or above Max).
func (r *RED) decide() (mark, forced bool) {
	c := &r.cfg
	switch {
	case r.avg < float64(c.Min):
		r.count = -1
		return false, false
	case r.avg >= float64(c.Max):
		r.count = -1
		return true, true
	}
	r.count++
	if r.count > 0 && r.ProbB(r.avg)*float64(r.count) >= r.r {
		r.count = 0
		r.r = r.rng.Float64()
		return true, false
	}
	if r.count == 0 { // just entered (Min, Max): a fresh draw, no mark
		r.r = r.rng.Float64()
	}
	return false, false
}

func (r *RED) Dequeue(now time.Time) (*Packet, bool) {
	p := r.q.pop()
	if p == nil {
		return nil, false
	}
	r.stats.dequeued(p)
	if r.q.n == 0 {
		r.idle, r.idleSince = true, now
	}
	return p, true
}

func (r *RED) NextReady(now time.Time) (time.Time, bool) { return now, r.q.n > 0 }
func (r *RED) Len() int                                  { return r.q.n }
func (r *RED) Bytes() int                                { return r.q.bytes }
func (r *RED) Stats() Stats                              { return r.stats }
func (r *RED) REDStats() REDStats                        { return r.red }
