package live

import (
	"cmp"
	"context"
	"errors"
	"math"
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
	// Name is the variant's name (default the profile's): summary keys
	// use it. Profile is the switch profile's name.
	Name    string
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
	// P50, P99 and Max are the handshake times of the completed connects.
	P50, P99, Max time.Duration
	// With KernelRun.Exchange: Exchanged counts connections whose bytes
	// all came back, DataRetransmits sums the client's data
	// retransmissions (tcpi_total_retrans at the end minus the SYNs).
	Exchanged, DataRetransmits int
	// Client and Server are the nstat counters (NstatCounters) of host 1
	// and host 2 over the run: after − before, only this run's
	// connections.
	Client, Server map[string]float64
	// Report is the probe's full report.
	Report *plive.Report
}

// DataRTOs is the client's data retransmission timeouts: TcpExtTCPTimeouts
// minus TcpExtTCPSynRetrans. A client in SYN-SENT resends its SYN only
// when the retransmission timer fires, and every firing counts one
// TCPTimeouts, so the difference is the timeouts after the handshake.
// (The server's TCPTimeouts also counts SYN-ACK timer firings, which no
// counter separates from duplicate-SYN answers: it is reported raw.)
func (k KernelResult) DataRTOs() float64 {
	if k.Client == nil {
		return 0
	}
	return max(k.Client["TcpExtTCPTimeouts"]-k.Client["TcpExtTCPSynRetrans"], 0)
}

// kernel runs KernelRun under one variant: base load (and cover rules),
// the variant's client TCP settings, then real connect() calls from host
// 1 to a listener on host 2, with the hosts' kernel counters around them.
func (r *runner) kernel(ctx context.Context, k KernelRun, v KernelVariant) (_ *KernelResult, err error) {
	prof, err := profile.Load(v.ProfileArg)
	if err != nil {
		return nil, err
	}
	prio := cmp.Or(v.Priority, k.Priority)
	st, err := startStack(ctx, r.stackConfig(v.ProfileArg, prio))
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, st.stop()) }()
	if err := installBaseLoad(ctx, st.mgmtAddr, k.BaseLoad, prio, v.CoverRules); err != nil {
		return nil, errors.Join(err, st.alive())
	}

	h1, h2 := r.topo.Hosts[0], r.topo.Hosts[1]
	restore, err := setSysctls(ctx, h1.Netns, v.ClientSysctls)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, restore()) }()
	if v.RouteRTOMin > 0 {
		undo, err := setRouteRTOMin(ctx, h1, v.RouteRTOMin)
		if err != nil {
			return nil, err
		}
		defer func() { err = errors.Join(err, undo()) }()
	}

	dst := netip.AddrPortFrom(h2.Addr.Addr(), KernelPort)
	stopListener, err := startListener(ctx, h2, dst, k.Exchange > 0)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, stopListener()) }()

	var before [2]map[string]float64
	for i, h := range []testbed.Host{h1, h2} {
		if before[i], err = readNstat(ctx, h.Netns); err != nil {
			return nil, err
		}
	}
	pctx, cancel := context.WithTimeout(ctx, time.Duration(float64(k.Flows)/k.Rate*float64(time.Second))+k.ConnectTimeout+settle)
	defer cancel()
	rep, results, err := plive.RunTCPProbe(pctx, plive.TCPProbeConfig{
		Netns: h1.Netns, Dst: dst, Count: k.Flows, Rate: k.Rate,
		Timeout: k.ConnectTimeout, Profile: probes.Linux(), Observer: r.obs, Logger: r.cfg.Logger,
		Exchange: k.Exchange,
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
	kr.Name = cmp.Or(v.Name, prof.Name)
	kr.Report = rep
	for i, h := range []testbed.Host{h1, h2} {
		after, err := readNstat(ctx, h.Netns)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			kr.Client = sub(after, before[0])
		} else {
			kr.Server = sub(after, before[1])
		}
	}
	return &kr, nil
}

// summarizeKernel counts retransmissions and handshake times.
func summarizeKernel(profileName string, results []plive.TCPResult) KernelResult {
	kr := KernelResult{Name: profileName, Profile: profileName, Flows: len(results)}
	var hs []time.Duration
	for _, res := range results {
		kr.SYNRetransmits += res.Retransmits
		if res.Retransmits > 0 {
			kr.Retransmitted++
		}
		kr.DataRetransmits += res.DataRetransmits
		if res.Exchanged {
			kr.Exchanged++
		}
		if res.Connected {
			kr.Connected++
			hs = append(hs, res.Handshake)
		}
	}
	if len(hs) > 0 {
		slices.Sort(hs)
		kr.P50 = median(hs)
		kr.P99 = hs[min(len(hs)-1, int(math.Ceil(0.99*float64(len(hs))))-1)]
		kr.Max = hs[len(hs)-1]
	}
	return kr
}

// startListener accepts (and with echo, echoes) connections on dst
// inside host h until the returned function is called.
func startListener(ctx context.Context, h testbed.Host, dst netip.AddrPort, echo bool) (stop func() error, err error) {
	return startBackground(ctx, "listener on "+h.Netns, make(chan netip.AddrPort, 1), func(ctx context.Context, ready chan netip.AddrPort) error {
		_, err := plive.ListenTCP(ctx, plive.TCPListenConfig{Netns: h.Netns, Addr: dst, Ready: ready, Echo: echo})
		return err
	})
}
