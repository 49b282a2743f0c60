package policing

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/pseudocong/pseudocong/experiments/livetcp"
	"github.com/pseudocong/pseudocong/netsim"
)

// Live is the live backend: real Linux TCP (iperf3) through a chain of
// `pseudocong switch` processes, one per switch on the path, each port's
// emulation taken from the path's hops (SwitchEmus). Close it after Run.
type Live struct {
	Binary string
	Log    *slog.Logger
	bed    *livetcp.Bed
}

// Name is "live".
func (*Live) Name() string { return "live" }

// Close removes the testbed.
func (l *Live) Close() error {
	if l.bed == nil {
		return nil
	}
	err := l.bed.Close()
	l.bed = nil
	return err
}

// SwitchEmus maps a path onto the live chain: switch i's port 1 sends
// towards the client (downloads) with hop i's download queue, delay and
// loss; its port 2 sends towards the server (uploads) with hop i+1's
// upload queue. A host's own sending end is the kernel's (a veth, no
// emulation): its hop's delay is added to the switch's port towards that
// host instead, which keeps the round trip, and its queue and loss are
// not emulated (SwitchEmus refuses a host end with a limiting queue or a
// loss). A rate at or above 1 Gbit/s is left to the veth, which is
// faster: nothing on this path queues at the line rate.
func SwitchEmus(p *Path) ([]livetcp.SwitchEmu, error) {
	n := len(p.Switches)
	if len(p.Hops) != n+1 {
		return nil, fmt.Errorf("policing: path of %d hops through %d switches is not a chain", len(p.Hops), n)
	}
	port := func(h Hop, q string, extra time.Duration) (livetcp.PortEmu, error) {
		e := livetcp.PortEmu{Loss: h.Loss}
		if d := h.Delay + extra; d > 0 {
			e.Delay = fmt.Sprintf("%dus", d.Microseconds())
		}
		if h.Rate > 0 && h.Rate < 1_000_000_000 {
			e.Rate = fmt.Sprintf("%dbit", h.Rate)
		}
		kind := strings.ToLower(strings.SplitN(q, ",", 2)[0])
		if e.Rate != "" || (kind != "droptail" && kind != "pfifo" && kind != "bfifo") {
			e.Qdisc = q
		}
		return e, nil
	}
	out := make([]livetcp.SwitchEmu, n)
	for i := range n {
		left, right := p.Hops[i], p.Hops[i+1]
		var extraL, extraR time.Duration
		if left.From.Kind == netsim.NodeHost {
			if err := hostEnd(left.UpQdisc, left.Loss); err != nil {
				return nil, fmt.Errorf("policing: hop %s: %w", left.Name, err)
			}
			extraL = left.Delay
		}
		if right.To.Kind == netsim.NodeHost {
			if err := hostEnd(right.DownQdisc, right.Loss); err != nil {
				return nil, fmt.Errorf("policing: hop %s: %w", right.Name, err)
			}
			extraR = right.Delay
		}
		var err error
		if out[i].Left, err = port(left, left.DownQdisc, extraL); err != nil {
			return nil, err
		}
		if out[i].Right, err = port(right, right.UpQdisc, extraR); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func hostEnd(q, loss string) error {
	kind := strings.ToLower(strings.SplitN(q, ",", 2)[0])
	if kind != "droptail" && kind != "pfifo" && kind != "bfifo" {
		return fmt.Errorf("a host's sending queue %q cannot be emulated live", q)
	}
	if loss != "" {
		return fmt.Errorf("loss %q on a host link cannot be emulated live in both directions", loss)
	}
	return nil
}

// Run (re)configures the chain for path and runs the cells one after the
// other.
func (l *Live) Run(p *Path, cells []Cell, s *Spec) ([]*FlowResult, error) {
	ctx := context.Background()
	emus, err := SwitchEmus(p)
	if err != nil {
		return nil, err
	}
	if l.bed == nil {
		l.bed, err = livetcp.Up(ctx, livetcp.Config{Binary: l.Binary, Switches: emus, CC: []string{"cubic", "bbr"}, Log: l.Log})
	} else {
		err = l.bed.Reconfigure(ctx, emus)
	}
	if err != nil {
		return nil, err
	}
	out := make([]*FlowResult, len(cells))
	for i, c := range cells {
		r := livetcp.Iperf{ClientCC: c.ClientCC, ServerCC: c.ServerCC, MSS: s.MSS, Reverse: !c.Upload,
			Duration: c.Duration, Omit: c.Omit, Bytes: int64(c.Bytes), Interval: s.Bin.D()}
		if c.ClientCC == c.ServerCC {
			r.CC = c.ClientCC
		}
		before, err := l.bed.Drops(ctx)
		if err != nil {
			return nil, err
		}
		res, err := l.bed.Run(ctx, r)
		if err != nil {
			return nil, fmt.Errorf("%s: %w\n%s", c.Key(false), err, l.bed.SwitchOutput())
		}
		if res.SenderCC != "" && res.SenderCC != c.SenderCC() {
			return nil, fmt.Errorf("%s: iperf3's sender used %s, want %s", c.Key(false), res.SenderCC, c.SenderCC())
		}
		after, err := l.bed.Drops(ctx)
		if err != nil {
			return nil, err
		}
		fr := &FlowResult{GoodputMbps: res.GoodputMbps, Retransmits: res.Retransmits, RetransmitsAll: res.RetransmitsAll, Series: res.Series}
		if l.Log != nil {
			l.Log.Info("live counters", "cell", c.Key(false), "n", len(after), "goodput", res.GoodputMbps, "retx", res.Retransmits, "retx_all", res.RetransmitsAll, "retx_per_bin", fmt.Sprint(res.RetxSeries))
		}
		for k, v := range after {
			if d := v - before[k]; d > 0 {
				fr.Drops += uint64(d)
				if l.Log != nil {
					l.Log.Info("live drops", "cell", c.Key(false), "counter", k, "n", d)
				}
			}
		}
		if c.Bytes > 0 {
			fr.CompletionS = res.Seconds
		}
		out[i] = fr
	}
	return out, nil
}
