package agent

import "time"

// pinsched is Open vSwitch's ofproto/pinsched.c: a token bucket in front of
// per-ingress-port queues served round-robin. pinsched_send: a Packet-In
// passes at once when nothing is queued and a token is free; otherwise it
// is queued, first dropping the oldest Packet-In of the longest queue if
// burst are already queued. pinsched_run: while tokens are free, queued
// Packet-Ins leave round-robin. (OVS also caps one run at 50 packets to
// share its main loop; this model releases on the token timer and needs no
// such cap.)
type pinsched struct {
	bucket *tokenBucket
	pq     *portQueues[PacketIn]
	burst  int
}

func newPinsched(rate float64, burst int) *pinsched {
	return &pinsched{
		bucket: newTokenBucket(rate, burst),
		pq:     newPortQueues(func(p *PacketIn) uint16 { return p.InPort }),
		burst:  burst,
	}
}

func (s *pinsched) admit(p PacketIn, now time.Time) (bool, PacketIn, bool) {
	if s.pq.len() == 0 && s.bucket.take(now) {
		return true, PacketIn{}, false
	}
	var dropped PacketIn
	did := false
	if s.pq.len() >= s.burst {
		dropped, did = s.pq.dropOldestOfLongest(), true
	}
	s.pq.push(p)
	return false, dropped, did
}

func (s *pinsched) release(now time.Time) (PacketIn, bool) {
	if s.pq.len() > 0 && s.bucket.take(now) {
		return s.pq.pop(), true
	}
	return PacketIn{}, false
}

func (s *pinsched) nextToken(now time.Time) time.Time { return s.bucket.nextToken(now) }
func (s *pinsched) len() int                          { return s.pq.len() }
func (s *pinsched) drain(f func(PacketIn))            { s.pq.drain(f) }
