package agent

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// Policy names a Packet-In scheduling policy (see Scheduler; one file per
// policy, sched_*.go): which queued miss the CPU builds next, which is
// dropped when the queue is full, whether jobs go first, and for
// rate_limited the OVS pinsched behind the CPU.
type Policy string

// Config holds the local-CPU knobs. Names of the YAML keys mirror Open
// vSwitch where OVS has the knob (controller_rate_limit,
// controller_burst_limit); MissQueueLimit plays the role of OVS's
// controller_queue_size (Packet-Ins waiting to reach the controller).
type Config struct {
	// PacketInCost is the CPU time to build one Packet-In (p).
	PacketInCost time.Duration `yaml:"packet_in_cost" mapstructure:"packet_in_cost"`
	// BatchSize is the number of built Packet-Ins that triggers a send (B).
	// 1 sends every Packet-In on its own.
	BatchSize int `yaml:"batch_size" mapstructure:"batch_size"`
	// FlushPeriod is the period of the flush timer. Required when
	// BatchSize > 1, otherwise a partial batch would wait forever.
	FlushPeriod time.Duration `yaml:"flush_period" mapstructure:"flush_period"`
	// MissQueueLimit bounds the misses waiting for the CPU (the one being
	// built is not counted). Overflow drops with reason miss_queue_full.
	MissQueueLimit int `yaml:"miss_queue_limit" mapstructure:"miss_queue_limit"`
	// JobQueueLimit bounds the jobs waiting for the CPU. Overflow makes
	// Submit return false (reason job_queue_full).
	JobQueueLimit int `yaml:"job_queue_limit" mapstructure:"job_queue_limit"`
	// RateLimit is controller_rate_limit in Packet-Ins per second; 0 means
	// no limit.
	RateLimit float64 `yaml:"controller_rate_limit" mapstructure:"controller_rate_limit"`
	// BurstLimit is controller_burst_limit: the token bucket depth and the
	// bound of the queue waiting for tokens. 0 means RateLimit/4 (at least
	// 1), the OVS default.
	BurstLimit int `yaml:"controller_burst_limit" mapstructure:"controller_burst_limit"`
	// Scheduling is the Packet-In scheduling policy: install_first
	// (default when empty), fifo, per_port_fair, syn_first or
	// rate_limited.
	Scheduling Policy `yaml:"scheduling" mapstructure:"scheduling"`
}

// DefaultConfig is an agent that adds no delay of its own (no build cost,
// no batching, no rate limit) but still has bounded queues. Calibrated
// switches come from profiles (package profile).
func DefaultConfig() Config {
	return Config{
		BatchSize:      1,
		MissQueueLimit: 1024,
		JobQueueLimit:  4096,
		Scheduling:     InstallFirst,
	}
}

// normalized fills the derived defaults: the scheduling policy and the OVS
// burst default.
func (c Config) normalized() Config {
	if c.Scheduling == "" {
		c.Scheduling = InstallFirst
	}
	if c.RateLimit > 0 && c.BurstLimit == 0 {
		c.BurstLimit = max(1, int(c.RateLimit/4))
	}
	return c
}

// Validate reports every invalid field, joined into one error.
func (c Config) Validate() error {
	c = c.normalized()
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.PacketInCost < 0 {
		bad("packet_in_cost %v: must not be negative", c.PacketInCost)
	}
	if c.BatchSize < 1 {
		bad("batch_size %d: must be at least 1", c.BatchSize)
	}
	if c.FlushPeriod < 0 {
		bad("flush_period %v: must not be negative", c.FlushPeriod)
	}
	if c.BatchSize > 1 && c.FlushPeriod <= 0 {
		bad("flush_period %v: must be positive when batch_size is %d, or a partial batch never leaves", c.FlushPeriod, c.BatchSize)
	}
	if c.MissQueueLimit < 1 {
		bad("miss_queue_limit %d: must be at least 1", c.MissQueueLimit)
	}
	if c.JobQueueLimit < 1 {
		bad("job_queue_limit %d: must be at least 1", c.JobQueueLimit)
	}
	if c.RateLimit < 0 {
		bad("controller_rate_limit %g: must not be negative (0 = unlimited)", c.RateLimit)
	}
	if c.RateLimit > 1e9 {
		bad("controller_rate_limit %g: above 1e9/s the token interval rounds to zero", c.RateLimit)
	}
	if c.BurstLimit < 0 {
		bad("controller_burst_limit %d: must not be negative", c.BurstLimit)
	}
	if !slices.Contains(Policies(), c.Scheduling) {
		bad("scheduling %q: want one of %v", c.Scheduling, Policies())
	}
	if c.Scheduling == RateLimited {
		// OVS's schema bounds (controller_rate_limit ≥ 100,
		// controller_burst_limit ≥ 25, default rate/4).
		if c.RateLimit < MinRateLimitedRate {
			bad("controller_rate_limit %g: scheduling %s needs at least %d", c.RateLimit, RateLimited, MinRateLimitedRate)
		}
		if c.BurstLimit < MinRateLimitedBurst && c.RateLimit >= MinRateLimitedRate {
			bad("controller_burst_limit %d: scheduling %s needs at least %d", c.BurstLimit, RateLimited, MinRateLimitedBurst)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("agent config: %w", errors.Join(errs...))
	}
	return nil
}
