package softswitch

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/pseudocong/pseudocong/tcam"
)

// FailMode is what the switch does with table misses while no controller
// is connected (Open vSwitch's fail_mode).
type FailMode uint8

const (
	// FailSecure drops table misses while no controller is connected.
	FailSecure FailMode = iota
	// FailStandalone forwards table misses as an L2 learning switch while
	// no controller is connected (flow entries still apply).
	FailStandalone
)

func (f FailMode) String() string {
	if f == FailStandalone {
		return "standalone"
	}
	return "secure"
}

// ParseFailMode parses "secure" or "standalone".
func ParseFailMode(s string) (FailMode, error) {
	switch s {
	case "secure":
		return FailSecure, nil
	case "standalone":
		return FailStandalone, nil
	}
	return 0, fmt.Errorf("softswitch: fail mode %q: want secure or standalone", s)
}

// Config configures a Switch. The zero value is usable: every field notes
// its default.
type Config struct {
	// DatapathID is reported in FEATURES_REPLY. Default 1.
	DatapathID uint64
	// FailMode: default FailSecure.
	FailMode FailMode
	// Buffers is the number of packet buffers for PACKET_IN (n_buffers).
	// Default 256; negative disables buffering (every PACKET_IN carries
	// the whole packet with buffer_id NO_BUFFER).
	Buffers int
	// BufferLifetime is how long a buffered packet is kept for the
	// controller before its slot may be reused. Default 5 s (Open vSwitch).
	BufferLifetime time.Duration
	// TableCapacity is the flow table size (ALL_TABLES_FULL beyond it).
	// Default flowtable.DefaultCapacity.
	TableCapacity int
	// TieBreak decides between overlapping flow entries of equal priority
	// (flowtable.Config.TieBreak). A switch modelling a TCAM must use its
	// layout's rule (pipeline.TieBreak(profile)); pipeline.Attach
	// refuses a switch built with another. Default tcam.LowerIDWins: the
	// earlier entry wins, as with the highest-first layout.
	TieBreak tcam.TieBreak
	// ClassifierCache is the exact-match cache size of the flow table's
	// classifier. Default 4096; negative disables it.
	ClassifierCache int
	// LearningTable bounds the MAC learning table used by the NORMAL action
	// and by fail-standalone. Default 4096.
	LearningTable int
	// LearningAge is how long a learned MAC stays valid. Default 300 s.
	LearningAge time.Duration
	// OutboxLimit bounds the queue of pending outputs; frames beyond it are
	// dropped (reason outbox_full). Control messages are never dropped.
	// Default 65536.
	OutboxLimit int
	// SerialNum and DpDesc go into the DESC stats reply. DpDesc defaults to
	// "pseudocong dpid:<16 hex digits>".
	SerialNum string
	DpDesc    string
	// Logger: default discard.
	Logger *slog.Logger
	// Metrics: nil disables metrics.
	Metrics *Metrics
}

func (c Config) withDefaults() Config {
	if c.DatapathID == 0 {
		c.DatapathID = 1
	}
	if c.Buffers == 0 {
		c.Buffers = 256
	}
	if c.BufferLifetime <= 0 {
		c.BufferLifetime = 5 * time.Second
	}
	if c.ClassifierCache == 0 {
		c.ClassifierCache = 4096
	}
	if c.ClassifierCache < 0 {
		c.ClassifierCache = 0
	}
	if c.LearningTable <= 0 {
		c.LearningTable = 4096
	}
	if c.LearningAge <= 0 {
		c.LearningAge = 300 * time.Second
	}
	if c.OutboxLimit <= 0 {
		c.OutboxLimit = 65536
	}
	if c.SerialNum == "" {
		c.SerialNum = "None"
	}
	if c.DpDesc == "" {
		c.DpDesc = fmt.Sprintf("pseudocong dpid:%016x", c.DatapathID)
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}
