package live

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"time"

	"github.com/pseudocong/pseudocong/probes"
	plive "github.com/pseudocong/pseudocong/probes/live"
	"github.com/pseudocong/pseudocong/profile"
	"github.com/pseudocong/pseudocong/testbed"
)

// KernelPort is the port the kernel TCP listener uses on host 2.
const KernelPort = 8080

// KernelResult is one kernel connect() run.
type KernelResult struct {
	// Profile is the switch profile's name (summary keys use it).
	Profile string
	Flows   int
	// Connected counts connects that completed.
	Connected int
	// SYNRetransmits sums tcpi_total_retrans over every connect: the SYNs
	// the host kernel resent because the switch held the handshake past
	// its RTO (1 s on Linux).
	SYNRetransmits int
	// Retransmitted counts connects with at least one SYN retransmission.
	Retransmitted int
	// P50 and Max are the handshake times of the completed connects.
	P50, Max time.Duration
	// Report is the probe's full report.
	Report *plive.Report
}

// kernel runs KernelRun under one switch profile: base load, then real
// connect() calls from host 1 to a listener on host 2.
func (r *runner) kernel(ctx context.Context, k KernelRun, profileArg string) (_ *KernelResult, err error) {
	prof, err := profile.Load(profileArg)
	if err != nil {
		return nil, err
	}
	st, err := startStack(ctx, r.stackConfig(profileArg, k.Priority))
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, st.stop()) }()
	if err := installBaseLoad(ctx, st.mgmtAddr, k.BaseLoad, k.Priority); err != nil {
		return nil, errors.Join(err, st.alive())
	}

	h1, h2 := r.topo.Hosts[0], r.topo.Hosts[1]
	dst := netip.AddrPortFrom(h2.Addr.Addr(), KernelPort)
	stopListener, err := startListener(ctx, h2, dst)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, stopListener()) }()

	pctx, cancel := context.WithTimeout(ctx, time.Duration(float64(k.Flows)/k.Rate*float64(time.Second))+k.ConnectTimeout+settle)
	defer cancel()
	rep, results, err := plive.RunTCPProbe(pctx, plive.TCPProbeConfig{
		Netns: h1.Netns, Dst: dst, Count: k.Flows, Rate: k.Rate,
		Timeout: k.ConnectTimeout, Profile: probes.Linux(), Observer: r.obs, Logger: r.cfg.Logger,
	})
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := st.alive(); err != nil {
		return nil, err
	}
	kr := summarizeKernel(prof.Name, results)
	kr.Report = rep
	return &kr, nil
}

// summarizeKernel counts retransmissions and handshake times.
func summarizeKernel(profileName string, results []plive.TCPResult) KernelResult {
	kr := KernelResult{Profile: profileName, Flows: len(results)}
	var hs []time.Duration
	for _, res := range results {
		kr.SYNRetransmits += res.Retransmits
		if res.Retransmits > 0 {
			kr.Retransmitted++
		}
		if res.Connected {
			kr.Connected++
			hs = append(hs, res.Handshake)
		}
	}
	if len(hs) > 0 {
		slices.Sort(hs)
		kr.P50 = median(hs)
		kr.Max = hs[len(hs)-1]
	}
	return kr
}

// startListener accepts connections on dst inside host h until the
// returned function is called.
func startListener(ctx context.Context, h testbed.Host, dst netip.AddrPort) (stop func() error, err error) {
	return startBackground(ctx, "listener on "+h.Netns, make(chan netip.AddrPort, 1), func(ctx context.Context, ready chan netip.AddrPort) error {
		_, err := plive.ListenTCP(ctx, plive.TCPListenConfig{Netns: h.Netns, Addr: dst, Ready: ready})
		return err
	})
}
