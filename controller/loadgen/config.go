// Package loadgen is a cbench-style load generator for OpenFlow 1.0
// controllers: N emulated switches connect, announce M hosts each with
// gratuitous ARPs so that a learning controller knows them, then send
// PACKET_INs and count the FLOW_MOD (ADD or MODIFY_STRICT) and non-LLDP
// PACKET_OUT responses, reporting responses per second like OFLOPS cbench.
//
// Throughput mode keeps every switch's socket full (the controller works
// at its own pace, TCP flow control pushes back); latency mode keeps one
// PACKET_IN outstanding per switch, so responses/s is the inverse of the
// round-trip time times the number of switches.
package loadgen

import (
	"fmt"
	"io"
	"log/slog"
	"time"
)

// Mode is cbench's test mode.
type Mode int

const (
	// Throughput sends PACKET_INs as fast as the connection takes them.
	Throughput Mode = iota
	// Latency keeps one PACKET_IN outstanding per switch.
	Latency
)

func (m Mode) String() string {
	switch m {
	case Throughput:
		return "throughput"
	case Latency:
		return "latency"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// ParseMode parses "throughput" or "latency".
func ParseMode(s string) (Mode, error) {
	switch s {
	case "throughput":
		return Throughput, nil
	case "latency":
		return Latency, nil
	}
	return 0, fmt.Errorf("unknown mode %q (want throughput or latency)", s)
}

// Defaults of Config.
const (
	DefaultDuration     = time.Second
	DefaultSetupTimeout = 10 * time.Second
)

// Config configures a run. Zero fields take the defaults noted.
type Config struct {
	// Controller is the address to connect to: tcp:HOST:PORT (Open vSwitch
	// target syntax, port default 6653) or HOST:PORT.
	Controller string
	// Switches is the number of emulated switches (default 16).
	Switches int
	// MACs is the number of hosts behind each switch (default 1000).
	MACs int
	// Ports is the number of ports of each switch; host i sits on port
	// i%Ports+1 (default 4, at least 2 so that traffic crosses ports).
	Ports int
	Mode  Mode
	// Duration of one measurement loop (default 1 s).
	Duration time.Duration
	// Loops is the number of measurement loops (default 10).
	Loops int
	// Warmup loops are run and printed but left out of the result
	// (default 1, as cbench; negative for none).
	Warmup int
	// FirstDPID is the datapath id of the first switch (default 1).
	FirstDPID uint64
	// SetupTimeout bounds connecting, the handshake and the ARP phase
	// (default 10 s).
	SetupTimeout time.Duration
	// ARPTimeout, if set, bounds the ARP phase alone (within SetupTimeout):
	// it ends as soon as the controller has answered every gratuitous ARP,
	// else when ARPTimeout has passed since the handshake. A controller
	// that answers nothing (a test's) then costs ARPTimeout, while
	// connecting and the handshake keep the whole SetupTimeout.
	ARPTimeout time.Duration
	// Out receives one cbench-style line per loop (nil: none).
	Out io.Writer
	// Logger defaults to discarding.
	Logger *slog.Logger
}

func (c Config) withDefaults() Config {
	if c.Switches <= 0 {
		c.Switches = 16
	}
	if c.MACs <= 0 {
		c.MACs = 1000
	}
	if c.Ports < 2 {
		c.Ports = 4
	}
	if c.Duration <= 0 {
		c.Duration = DefaultDuration
	}
	if c.Loops <= 0 {
		c.Loops = 10
	}
	if c.Warmup == 0 {
		c.Warmup = 1
	}
	if c.Warmup < 0 {
		c.Warmup = 0
	}
	if c.FirstDPID == 0 {
		c.FirstDPID = 1
	}
	if c.SetupTimeout <= 0 {
		c.SetupTimeout = DefaultSetupTimeout
	}
	if c.ARPTimeout < 0 {
		c.ARPTimeout = 0
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// validate rejects settings that cannot work.
func (c Config) validate() error {
	if c.Controller == "" {
		return fmt.Errorf("loadgen: no controller address")
	}
	if c.MACs < 2 {
		return fmt.Errorf("loadgen: need at least 2 MACs per switch, got %d", c.MACs)
	}
	if c.MACs > 1<<24 {
		return fmt.Errorf("loadgen: at most %d MACs per switch, got %d", 1<<24, c.MACs)
	}
	if c.Ports > 0xff00 {
		return fmt.Errorf("loadgen: at most %d ports, got %d", 0xff00, c.Ports)
	}
	if c.Mode != Throughput && c.Mode != Latency {
		return fmt.Errorf("loadgen: bad mode %v", c.Mode)
	}
	return nil
}
