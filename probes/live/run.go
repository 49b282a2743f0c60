package live

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/probes"
)

// Default probe addresses: not owned by any testbed host, so host kernels
// neither answer nor reset the raw probes (see the package comment).
var (
	DefaultSrc = netip.MustParseAddr("10.0.1.1")
	DefaultDst = netip.MustParseAddr("10.0.1.2")
)

// DefaultDstPort is the probes' destination port.
const DefaultDstPort = 80

// ProbeConfig configures RunProbe.
type ProbeConfig struct {
	Kind         probes.Kind
	Netns, Iface string
	// Src and Dst are the probe addresses (defaults DefaultSrc,
	// DefaultDst); DstPort defaults to DefaultDstPort.
	Src, Dst netip.Addr
	DstPort  uint16
	// DstMAC skips ARP resolution of Dst when set.
	DstMAC net.HardwareAddr
	// ResolveTimeout bounds ARP resolution; default 5 s.
	ResolveTimeout time.Duration

	Count      int
	Rate       float64
	Seed       uint64
	Profile    probes.TimerProfile
	Retransmit bool
	Timeout    time.Duration
	PayloadLen int

	Observer       probes.Observer
	Capture        *Capture
	TPacketVersion int
	Logger         *slog.Logger
}

func (c *ProbeConfig) defaults() {
	if !c.Src.IsValid() {
		c.Src = DefaultSrc
	}
	if !c.Dst.IsValid() {
		c.Dst = DefaultDst
	}
	if c.DstPort == 0 {
		c.DstPort = DefaultDstPort
	}
	if c.ResolveTimeout <= 0 {
		c.ResolveTimeout = 5 * time.Second
	}
	if c.Profile.Name == "" {
		c.Profile = probes.Berkeley()
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// RunProbe opens the prober's endpoint, resolves the responder's MAC,
// sends Count probes at Rate and waits until every probe is answered or
// timed out, or ctx ends (the report then says Complete=false). It
// returns the report and the raw per-probe results.
func RunProbe(ctx context.Context, cfg ProbeConfig) (*Report, []probes.Result, error) {
	cfg.defaults()
	ep, err := OpenEndpoint(EndpointConfig{
		Netns: cfg.Netns, Iface: cfg.Iface, Addrs: []netip.Addr{cfg.Src},
		Capture: cfg.Capture, TPacketVersion: cfg.TPacketVersion, Logger: cfg.Logger,
	})
	if err != nil {
		return nil, nil, err
	}
	defer ep.Close()

	pcfg := probes.Config{
		Count: cfg.Count, Rate: cfg.Rate, Seed: cfg.Seed,
		Flows:   probes.TupleSpec{Src: cfg.Src, Dst: cfg.Dst, DstPort: cfg.DstPort},
		Profile: cfg.Profile, Retransmit: cfg.Retransmit, Timeout: cfg.Timeout,
		PayloadLen: cfg.PayloadLen, Observer: cfg.Observer, Logger: cfg.Logger,
	}
	var probe *probes.Probe
	switch cfg.Kind {
	case probes.KindSYN:
		probe, err = probes.NewSYNProbe(clock.Wall{}, ep, pcfg)
	case probes.KindData:
		probe, err = probes.NewDataProbe(clock.Wall{}, ep, pcfg)
	default:
		err = fmt.Errorf("probe kind %v", cfg.Kind)
	}
	if err != nil {
		return nil, nil, err
	}
	ep.Start(probe)

	if cfg.DstMAC != nil {
		ep.SetNeighbor(cfg.Dst, cfg.DstMAC)
	} else {
		rctx, cancel := context.WithTimeout(ctx, cfg.ResolveTimeout)
		_, err := ep.Resolve(rctx, cfg.Dst, cfg.Src)
		cancel()
		if err != nil {
			return nil, nil, fmt.Errorf("probe: is a responder running for %s? %w", cfg.Dst, err)
		}
	}

	started := time.Now()
	if err := probe.Start(); err != nil {
		return nil, nil, err
	}
	complete := true
	select {
	case <-probe.Done():
	case <-ctx.Done():
		complete = false
	}
	results := probe.Results()
	stats := probe.Stats()
	epStats := ep.Stats()
	rep := &Report{
		Kind: cfg.Kind.String(), Profile: cfg.Profile.Name, Count: cfg.Count, RatePPS: cfg.Rate,
		Started: started, DurationS: time.Since(started).Seconds(), Complete: complete,
		Summary: summaryJSON(probes.Summarize(results)),
		Bins:    bins(results, cfg.Profile, cfg.Kind),
		Stats:   &stats, Endpoint: &epStats,
	}
	for _, r := range results {
		rj := ResultJSON{Index: r.Index, Tuple: r.Tuple.String(), Answered: r.Answered, Retransmits: r.Retransmits}
		if r.Answered {
			rj.RTTS = r.RTT.Seconds()
		}
		rep.Results = append(rep.Results, rj)
	}
	return rep, results, nil
}

// ResponderConfig configures RunResponder.
type ResponderConfig struct {
	Netns, Iface string
	// Addrs are the probe destination addresses to answer ARP for
	// (default DefaultDst).
	Addrs          []netip.Addr
	Capture        *Capture
	TPacketVersion int
	Logger         *slog.Logger
	// Ready, if set, is closed once the socket is open.
	Ready chan<- struct{}
	// Registerer, if set, gets the responder's counters
	// (pseudocong_probe_responder_*).
	Registerer prometheus.Registerer
}

// ResponderReport is what a responder did.
type ResponderReport struct {
	Responder probes.ResponderStats `json:"responder"`
	Endpoint  EndpointStats         `json:"endpoint"`
}

// RunResponder answers probes until ctx ends.
func RunResponder(ctx context.Context, cfg ResponderConfig) (*ResponderReport, error) {
	if len(cfg.Addrs) == 0 {
		cfg.Addrs = []netip.Addr{DefaultDst}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	ep, err := OpenEndpoint(EndpointConfig{
		Netns: cfg.Netns, Iface: cfg.Iface, Addrs: cfg.Addrs,
		Capture: cfg.Capture, TPacketVersion: cfg.TPacketVersion, Logger: cfg.Logger,
	})
	if err != nil {
		return nil, err
	}
	defer ep.Close()
	resp, err := probes.NewResponder(clock.Wall{}, ep, cfg.Logger)
	if err != nil {
		return nil, err
	}
	if err := registerResponderMetrics(cfg.Registerer, resp); err != nil {
		return nil, err
	}
	ep.Start(resp)
	if cfg.Ready != nil {
		close(cfg.Ready)
	}
	<-ctx.Done()
	return &ResponderReport{Responder: resp.Stats(), Endpoint: ep.Stats()}, nil
}
