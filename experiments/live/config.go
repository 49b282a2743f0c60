package live

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"time"

	"github.com/pseudocong/pseudocong/probes"
	"github.com/pseudocong/pseudocong/profile"
)

// Cell is one run of a spec's grid, as the experiments runner describes
// it. Kind uses the spec's names (see Supported for what the live backend
// measures).
type Cell struct {
	// Label names the cell in progress lines and errors.
	Label string
	// Key is the cell's summary-key suffix ("handshake.10pps"), used for
	// the per-cell agreement values.
	Key      string
	Kind     string
	Flows    int
	Rate     float64
	BaseLoad int
	Priority string
}

// KernelRun asks for real connect() runs: Flows connections at Rate from
// host 1 to a listener on host 2, once per switch profile, on BaseLoad
// rules of the Priority pattern's base priority, with the reactive
// controller's Priority pattern.
type KernelRun struct {
	Flows    int
	Rate     float64
	BaseLoad int
	Priority string
	// Profiles are switch profile names or paths; each run's summary keys
	// use the loaded profile's Name.
	Profiles []string
	// ConnectTimeout bounds each connect (default 60 s: past Linux's fifth
	// SYN retransmission, far beyond anything a test-sized run reaches).
	ConnectTimeout time.Duration
	// Variants, if set, replace Profiles: each is one run with its own
	// switch profile, controller side and client-host TCP settings (the
	// live mitigation comparison, package experiments/mitlive).
	Variants []KernelVariant
	// Exchange, if positive, makes every connection send this many bytes
	// after its handshake and read them back from an echoing listener, so
	// data RTOs can show in the kernel's counters (0: connect only).
	Exchange int
	// HostSysctls are set in both host namespaces once, before the first
	// kernel run (the namespaces go away with the testbed).
	HostSysctls []Sysctl
}

// KernelVariant is one kernel connect() run's set-up.
type KernelVariant struct {
	// Name names the run in summary keys; default the profile's name.
	Name string
	// ProfileArg is the switch's --profile (a name or a path).
	ProfileArg string
	// Priority overrides KernelRun.Priority (the reactive controller's
	// pattern and the base load's priority); empty: KernelRun's.
	Priority string
	// CoverRules pushes one wildcard rule per ingress port (port 1 →
	// port 2 and back) into the switch with the base load, before the
	// connects: every packet of the run then hits them and no flow needs
	// a Packet-In or a per-flow install.
	CoverRules bool
	// ClientSysctls are set in host 1's namespace for this run only (the
	// old values are put back afterwards), e.g. net.ipv4.tcp_frto=0.
	ClientSysctls []Sysctl
	// RouteRTOMin, if positive, gives host 1's route to host 2 a per-route
	// rto_min for this run (whole milliseconds).
	RouteRTOMin time.Duration
}

// Config is one live run.
type Config struct {
	// Binary is the pseudocong executable started for the controller and
	// the switch; default os.Executable().
	Binary string
	// Name is the testbed name (namespaces <Name>-h1, -h2, veths <Name>-s1,
	// -s2); default "lv" + 6 random hex digits, so concurrent runs never
	// collide.
	Name string
	// StateDir is where the testbed writes its state file; default a
	// fresh temporary directory, removed at the end.
	StateDir string
	// ProfileArg is what the switch gets as --profile (name or path);
	// Profile is the same profile loaded, for the simulation.
	ProfileArg string
	Profile    *profile.Profile
	// Timers classify RTTs; Seed drives the probes' tuples (the same seed
	// gives the sim the same flows).
	Timers probes.TimerProfile
	Seed   uint64
	// ControllerService and LinkLatency are the sim's models of the
	// controller host and the cables (spec controller.service_time and
	// network.link_latency), used for the agreement runs.
	ControllerService time.Duration
	LinkLatency       time.Duration

	Cells  []Cell
	Kernel *KernelRun

	// ProbeTimeout is how long a raw probe waits for its reply (default
	// the timer profile's SYN give-up plus 5 s).
	ProbeTimeout time.Duration
	// ControllerMetrics, SwitchMetrics and ProbeMetrics are the /metrics
	// addresses of the controller, the switch and the probes; empty picks
	// a free loopback port (probes: no endpoint). Fixed addresses let a
	// Prometheus scrape a live run.
	ControllerMetrics, SwitchMetrics, ProbeMetrics string
	// ProcessOutput, if set, receives the child processes' output.
	ProcessOutput io.Writer
	// Progress, if set, is told after every finished cell and kernel run.
	Progress func(done, total int, label string)
	Logger   *slog.Logger
}

// Kinds the live backend can measure.
const (
	KindPacketIn  = "packet_in"
	KindHandshake = "handshake"
)

// Supported reports whether the live backend measures cells of kind.
// data cells need their rules preloaded into the switch's backing table
// (not its TCAM), which no OpenFlow message can ask for; they are not
// supported.
func Supported(kind string) bool { return kind == KindHandshake || kind == KindPacketIn }

func (c *Config) defaults() error {
	if c.Name == "" {
		var b [3]byte
		if _, err := rand.Read(b[:]); err != nil {
			return err
		}
		c.Name = "lv" + hex.EncodeToString(b[:])
	}
	if c.Profile == nil {
		return fmt.Errorf("live: no switch profile")
	}
	if c.ProfileArg == "" {
		c.ProfileArg = c.Profile.Name
	}
	if c.Timers.Name == "" {
		c.Timers = probes.Berkeley()
	}
	if c.ProbeTimeout <= 0 {
		c.ProbeTimeout = c.Timers.SYNGiveUp + 5*time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Kernel != nil {
		k := *c.Kernel // the caller's KernelRun stays as it was
		k.Variants = slices.Clone(k.Variants)
		c.Kernel = &k
		if k.ConnectTimeout <= 0 {
			k.ConnectTimeout = 60 * time.Second
		}
		if len(k.Variants) == 0 {
			for _, p := range k.Profiles {
				k.Variants = append(k.Variants, KernelVariant{ProfileArg: p})
			}
		}
		for _, v := range k.Variants {
			if v.ProfileArg == "" {
				return fmt.Errorf("live: kernel variant %q: no switch profile", v.Name)
			}
		}
	}
	for _, cell := range c.Cells {
		if !Supported(cell.Kind) {
			return fmt.Errorf("live: cell %s: kind %q is not measured by the live backend (only %s, %s)", cell.Label, cell.Kind, KindPacketIn, KindHandshake)
		}
	}
	return nil
}
