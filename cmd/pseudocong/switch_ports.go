package main

import (
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/softswitch"
	"github.com/pseudocong/pseudocong/softswitch/afport"
	"github.com/pseudocong/pseudocong/softswitch/egress"
)

// addLinuxPorts opens each interface (--port, in order) as an AF_PACKET
// port numbered 1, 2, … — stable across restarts, shown by ovs-ofctl
// show — adds it to the switch and starts it, and exports the ports'
// AF_PACKET counters (pseudocong_afport_*) on reg. A port with an entry in
// emu transmits through its emulated link (pseudocong_port_egress_*). The
// returned function closes them all.
func addLinuxPorts(sw *softswitch.Switch, ifnames []string, tpacketVersion int, emu map[string]egress.Config, reg prometheus.Registerer, log *slog.Logger) (func(), error) {
	if len(ifnames) > int(openflow.PortMax) {
		return nil, usageErrorf("%d --port flags: at most %d", len(ifnames), openflow.PortMax)
	}
	met, err := afport.NewMetrics(reg)
	if err != nil {
		return nil, err
	}
	var egMet *egress.Metrics
	// The emulated links' delay lines and shapers run on a timerfd clock:
	// the Go runtime's timers fire up to 1 ms late on an idle process,
	// which added 4–6 ms to paper 003's 30.2 ms live round trip
	// (clock.Precise).
	var egClk *clock.Precise
	if len(emu) > 0 {
		if egMet, err = egress.NewMetrics(reg); err != nil {
			return nil, err
		}
		if egClk, err = clock.NewPrecise(); err != nil {
			return nil, err
		}
	}
	var opened []*afport.Port
	var shapers []*egress.Shaper
	closeAll := func() {
		for _, s := range shapers { // first: no write after the socket closed
			s.Close()
		}
		if egClk != nil {
			if err := egClk.Close(); err != nil {
				log.Warn("close link emulation clock", "err", err)
			}
		}
		for _, p := range opened {
			if err := p.Close(); err != nil {
				log.Warn("close port", "port", p.No(), "iface", p.Name(), "err", err)
			}
		}
	}
	seen := map[string]bool{}
	for i, name := range ifnames {
		if seen[name] {
			closeAll()
			return nil, usageErrorf("--port %s given twice", name)
		}
		seen[name] = true
		p, err := afport.Open(afport.Options{No: uint16(i + 1), IfName: name, TPacketVersion: tpacketVersion, Logger: log})
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("--port %s: %w", name, err)
		}
		opened = append(opened, p)
		met.Add(p)
		var sp softswitch.Port = p
		if c, ok := emu[name]; ok && c.Enabled() {
			c.Logger = log.With("port", p.No(), "iface", name)
			eg, err := egress.New(egClk, p.Transmit, c)
			if err != nil {
				closeAll()
				return nil, usageErrorf("--port %s link emulation: %w", name, err)
			}
			shapers = append(shapers, eg)
			egMet.Add(p.No(), name, eg)
			sp = &emulatedPort{Port: p, eg: eg}
			log.Info("port link emulation", "port", p.No(), "iface", name, "qdisc", fmt.Sprintf("%T", c.Qdisc),
				"rate", c.Rate, "delay", c.Delay, "loss", c.Loss != nil)
		}
		if err := sw.AddPort(sp); err != nil {
			closeAll()
			return nil, fmt.Errorf("--port %s: %w", name, err)
		}
		if err := p.Start(sw); err != nil {
			closeAll()
			return nil, fmt.Errorf("--port %s: %w", name, err)
		}
		log.Info("port added", "port", p.No(), "iface", name)
	}
	return closeAll, nil
}
