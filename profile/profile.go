// Package profile describes a switch model: its local-CPU agent, its TCAM,
// its data-plane forwarding delay and its control channel. Profiles are
// YAML files; the calibrated ones are built into the binary (builtin/*.yaml)
// and any other file can be loaded by path.
//
// Durations are YAML strings in Go syntax ("4.2ms", "50us"); a bare number
// is rejected rather than guessed as nanoseconds or seconds. Unknown keys
// are errors, so a typo cannot silently leave a default in place.
package profile

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/pseudocong/pseudocong/agent"
	"github.com/pseudocong/pseudocong/softswitch/dataplane"
	"github.com/pseudocong/pseudocong/tcam"
)

// Profile is one switch model.
type Profile struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	// Agent is the local CPU: Packet-In cost, batching, queues, rate limit.
	Agent agent.Config `yaml:"agent"`
	// TCAM is the hardware flow table in front of the larger software one.
	TCAM TCAMConfig `yaml:"tcam"`
	// BackingTable holds the rules that do not fit in the TCAM.
	BackingTable BackingTable `yaml:"backing_table"`
	// Forwarding is the data path of a TCAM hit.
	Forwarding Forwarding `yaml:"forwarding"`
	// Install is what happens to a rule after the local CPU installed it
	// (optional; zero for every hardware-switch profile).
	Install Install `yaml:"install"`
	// Upcall is the off-CPU part of a table miss's way to the local CPU
	// (optional; zero for every hardware-switch profile).
	Upcall Upcall `yaml:"upcall"`
	// ControllerChannel is the link between the switch and its controller
	// (used by the sim backend; live runs have a real one).
	ControllerChannel ControllerChannel `yaml:"controller_channel"`
	// Provenance records how a measured profile was made (pseudocong
	// calibrate); optional, nil for the hand-fitted built-ins.
	Provenance *Provenance `yaml:"provenance"`

	// Source says where the profile came from: "builtin:NAME" or a path.
	Source string `yaml:"-"`
}

// Provenance says where a measured profile's numbers come from. It does
// not change the model: the simulator and the switch ignore it.
type Provenance struct {
	// Tool names what wrote the profile, e.g. "pseudocong calibrate".
	Tool string `yaml:"tool"`
	// Switch describes the measured switch (its DESC stats, address).
	Switch string `yaml:"switch"`
	// MeasuredAt is when the measurement ran (RFC 3339).
	MeasuredAt string `yaml:"measured_at"`
	// Partial marks a profile whose measurement stopped early (the switch
	// refused, disconnected, filled its table or the budget ran out):
	// values the run did not reach are defaults, named in Missing.
	Partial bool `yaml:"partial"`
	// Missing lists the profile keys that were not measured.
	Missing []string `yaml:"missing"`
	// Notes is free text: why the run stopped, what to distrust.
	Notes string `yaml:"notes"`
}

// TCAMConfig is the TCAM part of a profile.
type TCAMConfig struct {
	// Capacity is the number of entries (slots).
	Capacity int `yaml:"capacity"`
	// Layout is a tcam.LayoutByName name: "highest-first" (default),
	// "lowest-first", "gap-K" (any K ≥ 1, e.g. "gap-8"), "ruletris",
	// "fastrule" or "hermes".
	Layout string `yaml:"layout"`
	// Timing converts chip operations into chip and local-CPU time.
	Timing tcam.Timing `yaml:"timing"`
}

// BackingTable is the table behind the TCAM (the chip's on-chip memory /
// the agent's software table, paper 000 §1.2): rules evicted from the TCAM
// or not yet swapped in live here.
type BackingTable struct {
	// Capacity bounds the rules held outside the TCAM; 0 leaves it to the
	// data plane's default (pipeline.DefaultBackingCapacity).
	Capacity int `yaml:"capacity"`
	// Eviction names the TCAM eviction policy (dataplane.EvictionByName:
	// "lru", "fifo"); "" leaves it to the data plane's default (lru).
	Eviction string `yaml:"eviction"`
	// SwapInUpcall makes a packet whose rule is only here go up to the
	// local CPU as a table miss does (one agent.packet_in_cost) before the
	// swap-in job: the chip cannot read this table itself. Unset (nil)
	// leaves it to the data plane's default, on (pipeline.SwapInUpcall);
	// docs/calibration.md fits Fig. 19 with it on.
	SwapInUpcall *bool `yaml:"swap_in_upcall"`
}

// Forwarding is the data-plane part of a profile.
type Forwarding struct {
	// HitDelay is the time from ingress to egress for a packet that hits
	// the TCAM.
	HitDelay time.Duration `yaml:"hit_delay"`
	// PacketOutDelay is the delay of a packet the controller hands back
	// (the packet a FLOW_MOD's buffer_id releases) from the end of that
	// FLOW_MOD's install job to egress, instead of HitDelay: Open vSwitch
	// runs it through its userspace slow path (it buffers nothing and
	// executes the controller's PACKET_OUT on its main thread), slower
	// than a datapath hit. 0 (the default, and every hardware profile):
	// HitDelay.
	PacketOutDelay time.Duration `yaml:"packet_out_delay"`
}

// Install is the part of a rule's installation that is not local-CPU
// time.
type Install struct {
	// ActivationDelay is how long after its install job ends a new rule
	// becomes visible to lookups, without occupying the local CPU (the
	// BARRIER_REPLY does not wait for it). Open vSwitch needs it: a
	// FLOW_MOD changes ofproto's classifier at once, but packets are
	// forwarded by the datapath's flow cache (megaflows), and the cached
	// flows that the new rule overrides are replaced only when the
	// revalidator threads, woken by the table change, have re-translated
	// them (ofproto-dpif-upcall.c), some ms later. 0 (the default, and
	// every hardware profile): usable when the job ends.
	ActivationDelay time.Duration `yaml:"activation_delay"`
}

// Upcall is how long a table miss takes to reach the local CPU's miss
// queue without occupying the CPU: the time the switch's thread needs to
// notice the packet, which on Open vSwitch's userspace datapath (one
// thread polls the ports, translates the miss and sends the PACKET_IN,
// ofproto-dpif-upcall.c, bridge_run) grows with how long that thread had
// slept. For a miss arriving a gap g after the previous one:
//
//	latency(g) = Latency + (IdleLatency − Latency) · (1 − e^(−g/IdleTimeConstant))
//
// (the first miss counts as idle); misses keep their order (a miss is not
// handed on before the one ahead of it: one thread handles both). With
// IdleLatency or IdleTimeConstant 0 every miss takes Latency. All 0 (the
// default, and every hardware profile): the miss is at the CPU at once.
type Upcall struct {
	// Latency is the delay of a miss that arrives right after another
	// (a busy switch).
	Latency time.Duration `yaml:"latency"`
	// IdleLatency is the delay of a miss after a long idle time; 0: no
	// rate dependence.
	IdleLatency time.Duration `yaml:"idle_latency"`
	// IdleTimeConstant is how long the switch must be idle for the delay
	// to move (1 − 1/e of the way) from Latency to IdleLatency.
	IdleTimeConstant time.Duration `yaml:"idle_time_constant"`
}

// Delay is the upcall latency of a miss that arrives gap after the
// previous one (gap < 0: the first miss, counted as idle).
func (u Upcall) Delay(gap time.Duration) time.Duration {
	if u.IdleLatency <= 0 || u.IdleTimeConstant <= 0 {
		return u.Latency
	}
	if gap < 0 {
		return u.IdleLatency
	}
	f := 1 - math.Exp(-float64(gap)/float64(u.IdleTimeConstant))
	return u.Latency + time.Duration(f*float64(u.IdleLatency-u.Latency))
}

// ControllerChannel is the control-channel part of a profile.
type ControllerChannel struct {
	// Latency is the one-way delay of a message between switch and
	// controller.
	Latency time.Duration `yaml:"latency"`
}

// Validate reports every invalid field, joined into one error.
func (p *Profile) Validate() error {
	var errs []error
	if p.Name == "" {
		errs = append(errs, errors.New("name: must not be empty"))
	}
	// Every numeric value against its documented bound (bounds.go), then
	// the components' own rules (cross-field, names), skipped for a
	// component whose values are already out of range.
	boundErrs, agentBad, timingBad := p.checkBounds()
	errs = append(errs, boundErrs...)
	if !agentBad {
		if err := p.Agent.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	if _, err := tcam.LayoutByName(p.TCAM.Layout); err != nil {
		errs = append(errs, fmt.Errorf("tcam.layout: %w", err))
	}
	if !timingBad {
		if err := p.TCAM.Timing.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	if _, err := dataplane.EvictionByName(p.BackingTable.Eviction); err != nil {
		errs = append(errs, fmt.Errorf("backing_table.eviction: %w", err))
	}
	if len(errs) > 0 {
		return fmt.Errorf("profile %q: %w", p.Name, errors.Join(errs...))
	}
	return nil
}

// TCAMLayout returns the tcam.Layout the profile names.
func (p *Profile) TCAMLayout() (tcam.Layout, error) { return tcam.LayoutByName(p.TCAM.Layout) }
