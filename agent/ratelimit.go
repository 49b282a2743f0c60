package agent

import "time"

// tokenBucket is a token bucket written as GCRA (virtual scheduling): it
// keeps the theoretical arrival time of the next conforming packet in
// integer nanoseconds, so simulated runs are exact, with no float drift.
// It is equivalent to a bucket of burst tokens refilled every interval,
// starting full (as OVS's token_bucket does).
type tokenBucket struct {
	interval time.Duration // 1 / rate
	slack    time.Duration // (burst-1) · interval
	tat      time.Time     // theoretical arrival time
}

func newTokenBucket(rate float64, burst int) *tokenBucket {
	interval := time.Duration(float64(time.Second) / rate)
	return &tokenBucket{interval: interval, slack: time.Duration(burst-1) * interval}
}

// take consumes a token if one is available at now.
func (b *tokenBucket) take(now time.Time) bool {
	tat := b.tat
	if tat.Before(now) {
		tat = now
	}
	if tat.Sub(now) > b.slack {
		return false
	}
	b.tat = tat.Add(b.interval)
	return true
}

// nextToken is the earliest time take can succeed.
func (b *tokenBucket) nextToken(now time.Time) time.Time {
	t := b.tat.Add(-b.slack)
	if t.Before(now) {
		return now
	}
	return t
}

// singleQueueLimiter is the limiter every policy but rate_limited uses
// when controller_rate_limit is set: one FIFO of at most burst Packet-Ins
// waiting for tokens; a Packet-In arriving when it is full is dropped.
type singleQueueLimiter struct {
	bucket *tokenBucket
	held   *ring[PacketIn]
}

func newSingleQueueLimiter(rate float64, burst int) *singleQueueLimiter {
	return &singleQueueLimiter{bucket: newTokenBucket(rate, burst), held: newRing[PacketIn](burst)}
}

func (l *singleQueueLimiter) admit(p PacketIn, now time.Time) (bool, PacketIn, bool) {
	if l.held.len() == 0 && l.bucket.take(now) {
		return true, PacketIn{}, false
	}
	if !l.held.push(p) {
		return false, p, true
	}
	return false, PacketIn{}, false
}

func (l *singleQueueLimiter) release(now time.Time) (PacketIn, bool) {
	if l.held.len() > 0 && l.bucket.take(now) {
		return l.held.pop(), true
	}
	return PacketIn{}, false
}

func (l *singleQueueLimiter) nextToken(now time.Time) time.Time { return l.bucket.nextToken(now) }
func (l *singleQueueLimiter) len() int                          { return l.held.len() }
func (l *singleQueueLimiter) drain(f func(PacketIn))            { l.held.drain(f) }
