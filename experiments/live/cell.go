package live

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pseudocong/pseudocong/experiments/sim"
	"github.com/pseudocong/pseudocong/probes"
	plive "github.com/pseudocong/pseudocong/probes/live"
	"github.com/pseudocong/pseudocong/testbed"
)

// cell measures one cell: a fresh controller and switch (an empty TCAM
// and a priority counter starting at 1, as the sim's fresh testbed), the
// base load, then the cell's probes.
func (r *runner) cell(ctx context.Context, c Cell) (_ *sim.Outcome, err error) {
	st, err := startStack(ctx, r.stackConfig(r.cfg.ProfileArg, c.Priority))
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, st.stop()) }()
	if err := installBaseLoad(ctx, st.mgmtAddr, c.BaseLoad, c.Priority, false); err != nil {
		return nil, errors.Join(err, st.alive())
	}

	before := scrapeCounters(ctx, st)
	var o *sim.Outcome
	switch c.Kind {
	case KindPacketIn:
		o, err = r.oneWay(ctx, c)
	default:
		o, err = r.handshake(ctx, c)
	}
	if err != nil {
		return nil, errors.Join(err, st.alive())
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := st.alive(); err != nil {
		return nil, err
	}
	after := scrapeCounters(ctx, st)
	after.sub(before).fill(o)
	return o, nil
}

// handshake sends Flows raw SYNs from host 1 to the responder on host 2
// (paper §3.1) and returns their RTTs.
func (r *runner) handshake(ctx context.Context, c Cell) (_ *sim.Outcome, err error) {
	h1, h2 := r.topo.Hosts[0], r.topo.Hosts[1]
	stopResponder, err := startResponder(ctx, h2)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, stopResponder()) }()
	pctx, cancel := context.WithTimeout(ctx, time.Duration(float64(c.Flows)/c.Rate*float64(time.Second))+r.cfg.ProbeTimeout+settle)
	defer cancel()
	_, results, err := plive.RunProbe(pctx, plive.ProbeConfig{
		Kind: probes.KindSYN, Netns: h1.Netns, Iface: h1.Iface,
		Count: c.Flows, Rate: c.Rate, Seed: r.cfg.Seed, Profile: r.cfg.Timers,
		Timeout: r.cfg.ProbeTimeout, Observer: r.obs, Logger: r.cfg.Logger,
	})
	if err != nil {
		return nil, fmt.Errorf("probe: %w", err)
	}
	o := &sim.Outcome{Delays: make([]time.Duration, c.Flows), Delivered: make([]bool, c.Flows)}
	for _, res := range results {
		if res.Index < 0 || res.Index >= c.Flows {
			continue
		}
		o.Delivered[res.Index] = res.Answered
		if res.Answered {
			o.Delays[res.Index] = res.RTT
		}
	}
	return o, nil
}

// startResponder answers the raw probes on host h until the returned
// function is called.
func startResponder(ctx context.Context, h testbed.Host) (stop func() error, err error) {
	return startBackground(ctx, "responder on "+h.Netns, make(chan struct{}), func(ctx context.Context, ready chan struct{}) error {
		_, err := plive.RunResponder(ctx, plive.ResponderConfig{Netns: h.Netns, Iface: h.Iface, Ready: ready})
		return err
	})
}
