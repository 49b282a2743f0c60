package egress

import "time"

// txBucket is the emulated line: a token bucket in nanobits (a rate of r
// bit/s adds r per nanosecond, so it is exact integer arithmetic) a few
// frames deep. A real transmitter has no burst; this one has enough that
// a wake-up up to txSlack late still finds the tokens the idle line
// earned meanwhile, and sends the frames it owes back to back: the
// long-run rate is the line's, the cost a micro-burst of at most txSlack.
//
// While the line is backlogged (a frame waits for it), the bucket may
// fill up to txBacklogSlack instead: a wake-up later than txSlack — the
// rule on a busy host, where a timer can be several milliseconds late —
// must not cost the line the time the waiting frame was owed, or the
// line runs below its rate exactly when it is the bottleneck (with TCP,
// whose next segments arrive only as the line drains, nothing else wakes
// it). An idle line still earns at most txSlack.
type txBucket struct {
	rate, max, tokens int64
	backlogMax        int64 // the bound while backlogged
	backlogged        bool  // a frame was waiting for the line at last
	last              time.Time
	started           bool
}

const (
	txSlack        = 2 * time.Millisecond
	txBacklogSlack = 20 * time.Millisecond
	txMinBurst     = 2 * 1518 // bytes: two full Ethernet frames
	nanobitsPerB   = 8 * 1_000_000_000
)

func newTxBucket(rate int64) txBucket {
	burst := max(int64(txMinBurst), rate/8*int64(txSlack)/int64(time.Second))
	backlog := max(burst, rate/8*int64(txBacklogSlack)/int64(time.Second))
	// Full at the first frame, as after an idle period.
	return txBucket{rate: rate, max: burst * nanobitsPerB, backlogMax: backlog * nanobitsPerB}
}

// setBacklogged tells the bucket whether a frame waits for the line from
// now on (see the type's comment). The level is settled at now under the
// bound that held until now, so an idle stretch never earns the backlog's
// bound and a backlog's credit never carries into idle.
func (b *txBucket) setBacklogged(on bool, now time.Time) {
	if on == b.backlogged {
		return
	}
	if b.started {
		b.tokens = min(b.level(now), b.max)
		if now.After(b.last) {
			b.last = now
		}
	}
	b.backlogged = on
}

func (b *txBucket) level(now time.Time) int64 {
	if !b.started {
		return b.max
	}
	top := b.max
	if b.backlogged {
		top = b.backlogMax
	}
	el := int64(now.Sub(b.last))
	if el <= 0 {
		return b.tokens
	}
	if el >= (top-b.tokens)/b.rate+1 {
		return top
	}
	return min(top, b.tokens+el*b.rate)
}

// readyAt is when the bucket holds the cost of n bytes (now if it does).
// A frame longer than the bucket waits for a full one and takes it into
// debt, so jumbo frames pass at the line's rate.
func (b *txBucket) readyAt(n int, now time.Time) time.Time {
	need := min(int64(n)*nanobitsPerB, b.max) - b.level(now)
	if need <= 0 {
		return now
	}
	return now.Add(time.Duration((need + b.rate - 1) / b.rate))
}

func (b *txBucket) take(n int, now time.Time) {
	b.tokens = b.level(now) - int64(n)*nanobitsPerB
	if !b.started || now.After(b.last) {
		b.last, b.started = now, true
	}
}
