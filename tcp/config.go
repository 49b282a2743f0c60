package tcp

import (
	"fmt"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/tcp/cc"
)

// Config configures one endpoint. Start from DefaultConfig (Linux-like):
// a zero boolean means "off".
type Config struct {
	Clock clock.Clock
	// Output sends a segment; the segment is valid only during the call.
	Output                func(s *Segment)
	LocalPort, RemotePort uint16

	Profile Profile
	// MSS is the largest payload this end sends and announces (bytes).
	MSS            int
	SndBuf, RcvBuf int // bytes
	WindowScaling  bool
	SACK           bool
	Timestamps     bool
	ECN            bool
	FRTO           bool // RFC 5682 spurious-timeout detection
	Eifel          bool // RFC 3522 detection with timestamps (needs Timestamps)
	// Pacing spaces segments at the algorithm's PacingRate, if it sets one.
	Pacing    bool
	DupThresh int // duplicate ACKs (or SACKed segments) that mean a loss
	// CountACKs hands the algorithm at most one acknowledged segment per
	// ACK, as ns-3's TcpNewReno counts (one segment per ACK in slow start,
	// MSS²/cwnd per ACK above it); off, the algorithm gets the segments
	// acknowledged, as Linux (RFC 3465 with L = ∞). For comparisons with
	// ns-3 only.
	CountACKs bool
	// Recovery is the fast-recovery rule without SACK (recovery.go);
	// the zero value is RFC 6582 NewReno with PRR.
	Recovery Recovery
	// CC names the congestion-control algorithm (cc.Names()).
	CC string
	// Algorithm, if set, is used instead of a new instance of CC (one
	// per connection: algorithms keep per-connection state).
	Algorithm cc.Algorithm
	ISS       uint32 // initial send sequence number (deterministic)
	Seed      uint64 // handed to the algorithm (cc.Conn.Seed) for its randomness
}

// DefaultConfig is a Linux-like endpoint: Linux timers, MSS 1460, window
// scaling, SACK, timestamps, F-RTO, pacing when the algorithm asks for it
// (Linux's internal pacing for BBR), 4 MiB buffers, NewReno.
func DefaultConfig() Config {
	return Config{
		Profile: Linux(), MSS: 1460, SndBuf: 4 << 20, RcvBuf: 4 << 20,
		WindowScaling: true, SACK: true, Timestamps: true, FRTO: true, Pacing: true,
		DupThresh: 3, CC: "newreno",
	}
}

func (c *Config) check() error {
	switch {
	case c.Clock == nil:
		return fmt.Errorf("tcp: config: no clock")
	case c.Output == nil:
		return fmt.Errorf("tcp: config: no output func")
	case c.MSS < 1 || c.MSS > 65495:
		return fmt.Errorf("tcp: config: mss %d: want 1..65495", c.MSS)
	case c.SndBuf < c.MSS:
		return fmt.Errorf("tcp: config: send buffer %d bytes: want at least one MSS (%d)", c.SndBuf, c.MSS)
	case c.RcvBuf < c.MSS:
		return fmt.Errorf("tcp: config: receive buffer %d bytes: want at least one MSS (%d)", c.RcvBuf, c.MSS)
	case c.RcvBuf > 1<<30:
		return fmt.Errorf("tcp: config: receive buffer %d bytes: at most 1 GiB (window scale 14)", c.RcvBuf)
	case c.Profile.InitialCwnd < 1:
		return fmt.Errorf("tcp: config: profile %q: initial window must be at least 1", c.Profile.Name)
	case c.Profile.RTO.Initial <= 0 || c.Profile.RTO.Min <= 0:
		return fmt.Errorf("tcp: config: profile %q: RTO initial and minimum must be positive", c.Profile.Name)
	case c.Profile.DelAckCount < 1:
		return fmt.Errorf("tcp: config: profile %q: delayed-ACK count must be at least 1", c.Profile.Name)
	case c.Eifel && !c.Timestamps:
		return fmt.Errorf("tcp: config: Eifel detection needs timestamps")
	}
	if c.DupThresh < 1 {
		c.DupThresh = 3
	}
	if c.CC == "" {
		c.CC = "newreno"
	}
	if c.Algorithm != nil {
		return nil
	}
	if _, err := cc.New(c.CC); err != nil {
		return fmt.Errorf("tcp: config: %w", err)
	}
	return nil
}
