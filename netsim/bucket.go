package netsim

import (
	"fmt"
	"math"
	"time"
)

// tokensPerByte is the cost of one byte. A token is a nanobit (1e-9 bit),
// so a rate of r bits/s adds exactly r tokens per nanosecond: the bucket
// is exact integer arithmetic and a long run accumulates no rounding, which
// is what lets the tests count policed bytes exactly.
const tokensPerByte = 8 * 1_000_000_000

// maxBucketBytes keeps burst*tokensPerByte (and the headroom fill needs)
// inside an int64: about 576 MB, far above any real burst.
const maxBucketBytes = math.MaxInt64 / tokensPerByte / 2

// bucket is a token bucket of depth max, filled at rate, full when first
// used (as tc-tbf and tc-police start).
type bucket struct {
	rate    int64 // bits/s, = tokens per ns
	max     int64 // tokens
	tokens  int64
	last    time.Time
	started bool
}

func newBucket(what string, rate int64, burst int) (bucket, error) {
	if rate <= 0 {
		return bucket{}, fmt.Errorf("netsim: %s: rate %d bit/s: want a positive rate", what, rate)
	}
	if burst <= 0 || burst > maxBucketBytes {
		return bucket{}, fmt.Errorf("netsim: %s: burst %d bytes: want 1..%d", what, burst, maxBucketBytes)
	}
	max := int64(burst) * tokensPerByte
	return bucket{rate: rate, max: max, tokens: max}, nil
}

// level is the tokens the bucket would hold at now, without changing it.
func (b *bucket) level(now time.Time) int64 {
	if !b.started {
		return b.max
	}
	el := int64(now.Sub(b.last))
	if el <= 0 {
		return b.tokens
	}
	room := b.max - b.tokens
	if el >= room/b.rate+1 { // el*rate would reach the cap (or overflow)
		return b.max
	}
	return min(b.max, b.tokens+el*b.rate)
}

// fill brings the bucket to now.
func (b *bucket) fill(now time.Time) {
	b.tokens = b.level(now)
	if !b.started || now.After(b.last) {
		b.last, b.started = now, true
	}
}

// take spends the cost of n bytes if the bucket holds it at now.
func (b *bucket) take(n int, now time.Time) bool {
	b.fill(now)
	cost := int64(n) * tokensPerByte
	if b.tokens < cost {
		return false
	}
	b.tokens -= cost
	return true
}

// readyAt is the earliest time the bucket holds the cost of n bytes
// (rounded up to the next nanosecond, so the packet never leaves early).
func (b *bucket) readyAt(n int, now time.Time) time.Time {
	need := int64(n)*tokensPerByte - b.level(now)
	if need <= 0 {
		return now
	}
	return now.Add(time.Duration((need + b.rate - 1) / b.rate))
}
