package egress

import "time"

// txBucket is the emulated line: a token bucket in nanobits (a rate of r
// bit/s adds r per nanosecond, so it is exact integer arithmetic) a few
// frames deep. A real transmitter has no burst; this one has enough that
// a wake-up up to txSlack late still finds the tokens the idle line
// earned meanwhile, and sends the frames it owes back to back: the
// long-run rate is the line's, the cost a micro-burst of at most txSlack.
type txBucket struct {
	rate, max, tokens int64
	last              time.Time
	started           bool
}

const (
	txSlack      = 2 * time.Millisecond
	txMinBurst   = 2 * 1518 // bytes: two full Ethernet frames
	nanobitsPerB = 8 * 1_000_000_000
)

func newTxBucket(rate int64) txBucket {
	burst := max(int64(txMinBurst), rate/8*int64(txSlack)/int64(time.Second))
	// Full at the first frame, as after an idle period.
	return txBucket{rate: rate, max: burst * nanobitsPerB}
}

func (b *txBucket) level(now time.Time) int64 {
	if !b.started {
		return b.max
	}
	el := int64(now.Sub(b.last))
	if el <= 0 {
		return b.tokens
	}
	if el >= (b.max-b.tokens)/b.rate+1 {
		return b.max
	}
	return min(b.max, b.tokens+el*b.rate)
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
