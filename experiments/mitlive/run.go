package mitlive

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/pseudocong/pseudocong/experiments"
	"github.com/pseudocong/pseudocong/experiments/live"
	"github.com/pseudocong/pseudocong/profile"
)

// Config is one live mitigation comparison. The zero value of every
// field but Binary is its default (see the Default* constants).
type Config struct {
	// Binary is the pseudocong executable the controller and switch run
	// from (default: this executable).
	Binary string
	// Profile is the base switch profile, name or path (default
	// DefaultProfile).
	Profile string
	// Variants are variant names (ParseVariant; default DefaultVariants).
	// The first is the reference the cuts are computed against; it should
	// be "baseline".
	Variants []string
	// Flows connects at Rate per second on BaseLoad base rules with the
	// reactive controller's Priority pattern: live-check's kernel run.
	Flows    int
	Rate     float64
	BaseLoad int
	Priority string
	// Exchange is the bytes each connection sends and gets echoed after
	// its handshake (data segments for the data RTO count); negative: no
	// exchange.
	Exchange int
	// Rounds is how many times every variant runs (every run on a fresh
	// testbed; the variants' order rotates by one per round, so a drift of
	// the shared machine's load does not always hit the same variant).
	Rounds int
	// ConnectTimeout bounds each connect (default live's, 60 s).
	ConnectTimeout time.Duration
	// Testbed names the testbeds: round r's are Testbed followed by r
	// (keep it short: interface names are at most 15 bytes); empty: random.
	Testbed       string
	ProcessOutput io.Writer
	// Progress, if set, is told after every finished kernel run.
	Progress func(done, total int, label string)
	Logger   *slog.Logger
}

// Defaults of Config, live-check's kernel run (experiments/specs/live-check.yaml).
const (
	DefaultProfile  = "pica8-p3297"
	DefaultFlows    = 100
	DefaultRate     = 100
	DefaultBaseLoad = 1000
	DefaultPriority = experiments.PriorityAscending
	DefaultExchange = 16 << 10
	DefaultRounds   = 3
)

func (c *Config) defaults() error {
	if c.Profile == "" {
		c.Profile = DefaultProfile
	}
	if len(c.Variants) == 0 {
		c.Variants = DefaultVariants
	}
	if c.Flows == 0 {
		c.Flows = DefaultFlows
	}
	if c.Rate == 0 {
		c.Rate = DefaultRate
	}
	if c.BaseLoad == 0 {
		c.BaseLoad = DefaultBaseLoad
	}
	if c.Priority == "" {
		c.Priority = DefaultPriority
	}
	if c.Exchange == 0 {
		c.Exchange = DefaultExchange
	}
	if c.Rounds == 0 {
		c.Rounds = DefaultRounds
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	switch {
	case c.Flows < 1:
		return fmt.Errorf("mitlive: flows %d: want at least 1", c.Flows)
	case !(c.Rate > 0):
		return fmt.Errorf("mitlive: rate %v: want > 0", c.Rate)
	case c.BaseLoad < 0:
		return fmt.Errorf("mitlive: base load %d: want ≥ 0", c.BaseLoad)
	case c.Rounds < 1:
		return fmt.Errorf("mitlive: rounds %d: want at least 1", c.Rounds)
	case !slices.Contains([]string{experiments.PriorityAscending, experiments.PriorityDescending, experiments.PriorityConstant}, c.Priority):
		return fmt.Errorf("mitlive: priority %q: want ascending, descending or constant", c.Priority)
	}
	seen := map[string]bool{}
	for _, n := range c.Variants {
		if seen[n] {
			return fmt.Errorf("mitlive: variant %q listed twice", n)
		}
		seen[n] = true
	}
	return nil
}

// Result is a finished comparison.
type Result struct {
	Config Config `json:"-"`
	// Kernel is what the client kernel defaults are (uname, the knobs'
	// values in a fresh namespace, read before any change).
	Kernel KernelInfo `json:"kernel"`
	// Variants in Config.Variants' order; Rounds[r] is round r's run.
	Variants []VariantResult `json:"variants"`
}

// VariantResult is one variant over every round.
type VariantResult struct {
	Name string `json:"name"`
	// Profile is the switch profile's name; SpaceLost the share of the
	// TCAM its layout keeps out of use (tcpexp.Mitigation.SpaceLost).
	Profile   string    `json:"profile"`
	SpaceLost float64   `json:"tcam_space_lost"`
	Rounds    []Measure `json:"rounds"`
}

// Measure is one kernel run's numbers.
type Measure struct {
	// SYNRetrans is host 1's TcpExtTCPSynRetrans over the run (nstat);
	// SYNRetransTCPInfo the sum of tcpi_total_retrans at the end of every
	// handshake (the same SYNs, counted per socket: a cross-check).
	SYNRetrans        float64 `json:"syn_retrans"`
	SYNRetransTCPInfo int     `json:"syn_retrans_tcp_info"`
	// RetransmittedShare is the share of connects with ≥ 1 SYN retransmission.
	RetransmittedShare float64 `json:"retransmitted_share"`
	P50S               float64 `json:"handshake_p50_s"`
	P99S               float64 `json:"handshake_p99_s"`
	MaxS               float64 `json:"handshake_max_s"`
	// DataRTOs is host 1's data retransmission timeouts
	// (live.KernelResult.DataRTOs), Timeouts its raw TcpExtTCPTimeouts.
	DataRTOs float64 `json:"data_rtos"`
	Timeouts float64 `json:"timeouts"`
	// DataRetransmits: the client's data segments resent (TCP_INFO).
	DataRetransmits int `json:"data_retransmits"`
	// ServerSYNRetrans and ServerTimeouts: host 2's TcpExtTCPSynRetrans
	// (SYN-ACKs resent, on its timer or for a duplicate SYN) and
	// TcpExtTCPTimeouts (SYN-ACK timer and data RTOs together).
	ServerSYNRetrans float64 `json:"server_syn_retrans"`
	ServerTimeouts   float64 `json:"server_timeouts"`
	ConnectedShare   float64 `json:"connected_share"`
	ExchangedShare   float64 `json:"exchanged_share"`
	// Client and Server are every counter read (live.NstatCounters),
	// after − before.
	Client map[string]float64 `json:"client_nstat"`
	Server map[string]float64 `json:"server_nstat"`
}

// Run runs every round and returns the result.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	var vs []Variant
	for _, n := range cfg.Variants {
		v, err := ParseVariant(n)
		if err != nil {
			return nil, err
		}
		vs = append(vs, v)
	}
	dir, err := os.MkdirTemp("", "pseudocong-mitlive-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	res := &Result{Config: cfg, Kernel: readKernelInfo()}
	kvs := make([]live.KernelVariant, len(vs))
	for i, v := range vs {
		arg, p, err := v.switchProfile(cfg.Profile, dir)
		if err != nil {
			return nil, err
		}
		lost, err := v.Switch.SpaceLost(p)
		if err != nil {
			return nil, err
		}
		kvs[i] = v.kernelVariant(arg)
		res.Variants = append(res.Variants, VariantResult{Name: v.Name, Profile: p.Name, SpaceLost: lost})
	}
	base, err := profile.Load(cfg.Profile)
	if err != nil {
		return nil, err
	}
	total := cfg.Rounds * len(vs)
	done := 0
	for r := range cfg.Rounds {
		// Rotate the order by one per round.
		order := make([]int, len(vs))
		for i := range order {
			order[i] = (i + r) % len(vs)
		}
		name := ""
		if cfg.Testbed != "" {
			name = fmt.Sprintf("%s%d", cfg.Testbed, r)
		}
		for _, i := range order {
			// Every run on a fresh testbed: nothing a run leaves in the
			// hosts' namespaces (neighbour entries, TIME-WAIT sockets)
			// may change the next one. In one testbed the later runs of a
			// round drifted into a slower regime (docs/mitigations.md).
			k := &live.KernelRun{
				Flows: cfg.Flows, Rate: cfg.Rate, BaseLoad: cfg.BaseLoad, Priority: cfg.Priority,
				ConnectTimeout: cfg.ConnectTimeout, Exchange: max(cfg.Exchange, 0),
				// No cached RTT or ssthresh (tcp_metrics) from an earlier
				// connection to the same server may start a connection.
				HostSysctls: []live.Sysctl{{Key: "net.ipv4.tcp_no_metrics_save", Value: "1"}},
				Variants:    []live.KernelVariant{kvs[i]},
			}
			lc := live.Config{
				Binary: cfg.Binary, Name: name, ProfileArg: cfg.Profile, Profile: base,
				Kernel: k, ProcessOutput: cfg.ProcessOutput, Logger: cfg.Logger,
				Progress: func(_, _ int, label string) {
					done++
					if cfg.Progress != nil {
						cfg.Progress(done, total, fmt.Sprintf("round %d/%d: %s", r+1, cfg.Rounds, label))
					}
				},
			}
			out, err := live.Run(ctx, lc)
			if err != nil {
				return nil, fmt.Errorf("mitlive: round %d: %w", r+1, err)
			}
			if len(out.Kernel) != 1 {
				return nil, fmt.Errorf("mitlive: round %d, %s: %d kernel results, want 1", r+1, vs[i].Name, len(out.Kernel))
			}
			res.Variants[i].Rounds = append(res.Variants[i].Rounds, measure(out.Kernel[0]))
		}
	}
	return res, nil
}

func measure(k live.KernelResult) Measure {
	m := Measure{
		SYNRetrans: k.Client["TcpExtTCPSynRetrans"], SYNRetransTCPInfo: k.SYNRetransmits,
		P50S: k.P50.Seconds(), P99S: k.P99.Seconds(), MaxS: k.Max.Seconds(),
		DataRTOs: k.DataRTOs(), Timeouts: k.Client["TcpExtTCPTimeouts"],
		DataRetransmits:  k.DataRetransmits,
		ServerSYNRetrans: k.Server["TcpExtTCPSynRetrans"], ServerTimeouts: k.Server["TcpExtTCPTimeouts"],
		Client: k.Client, Server: k.Server,
	}
	if k.Flows > 0 {
		m.RetransmittedShare = float64(k.Retransmitted) / float64(k.Flows)
		m.ConnectedShare = float64(k.Connected) / float64(k.Flows)
		m.ExchangedShare = float64(k.Exchanged) / float64(k.Flows)
	}
	return m
}

// KernelInfo is the host kernel and its TCP knobs' defaults.
type KernelInfo struct {
	Release string `json:"release"`
	// Knobs maps each knob a variant may flip to the root namespace's
	// value ("absent" if this kernel lacks it); a new namespace starts
	// with the kernel's defaults, which these are unless the host was
	// changed.
	Knobs map[string]string `json:"knobs"`
}

func readKernelInfo() KernelInfo {
	ki := KernelInfo{Knobs: map[string]string{}}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		ki.Release = strings.TrimSpace(string(b))
	}
	for _, k := range []string{"tcp_frto", "tcp_syn_linear_timeouts", "tcp_rto_min_us", "tcp_syn_retries", "tcp_early_retrans", "tcp_recovery"} {
		b, err := os.ReadFile("/proc/sys/net/ipv4/" + k)
		if err != nil {
			ki.Knobs["net.ipv4."+k] = "absent"
			continue
		}
		ki.Knobs["net.ipv4."+k] = strings.TrimSpace(string(b))
	}
	return ki
}
