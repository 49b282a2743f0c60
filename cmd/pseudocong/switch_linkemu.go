package main

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/pseudocong/pseudocong/netsim"
	"github.com/pseudocong/pseudocong/softswitch"
	"github.com/pseudocong/pseudocong/softswitch/afport"
	"github.com/pseudocong/pseudocong/softswitch/egress"
)

// Link emulation on --port interfaces: the kernel here has no netem, red or
// police, so the switch's ports do it (package egress).

const linkEmuHelp = `

Link emulation on --port interfaces (the frames the switch transmits on a
port go through, in order: qdisc, line rate, loss, delay line; each flag
is IFNAME=SPEC, repeatable, one per interface; the config file takes the
same keys as lists of "IFNAME=SPEC" strings):

  --port-qdisc s1-eth2=tbf,rate=20mbit,burst=32kb,latency=50ms
  --port-qdisc s1-eth2=droptail,limit=100        (packets; limit=64kb: bytes)
  --port-qdisc s1-eth2=red,limit=400kb,min=30kb,max=90kb,probability=0.02,avpkt=1000,burst=55,bandwidth=20mbit,ecn
  --port-qdisc s1-eth2=police,rate=10mbit,burst=16kb
  --port-qdisc 's1-eth2=prio(tbf,rate=10mbit,burst=16kb,latency=50ms;droptail,limit=100)'
               OpenFlow queues 0, 1, ... (';'-separated qdiscs above), strict
               priority, queue 0 first: ENQUEUE:PORT:Q selects one, OUTPUT
               uses queue 0, QUEUE_GET_CONFIG and QUEUE stats report them
  --port-rate  s1-eth2=10mbit     line rate, so a droptail or red queue builds
  --port-delay s1-eth2=15ms       one-way delay line (optionally 15ms,limit=4mb)
  --port-loss  s1-eth2=1%         Bernoulli; or gemodel,p=1%,r=25%[,1-h=100%][,1-k=0%]

Units are tc's: kbit/mbit/gbit (10^3..), kbps/mbps (bytes/s); sizes in
bytes, kb/mb = 1024/1048576; times s, ms, us. A port without these flags
writes frames straight to its socket. Counters: pseudocong_port_egress_*.`

func addLinkEmuFlags(f *pflag.FlagSet) {
	f.StringArray("port-qdisc", nil, "IFNAME=SPEC: egress qdisc of a --port (tbf, droptail, red, police, prio(Q0;Q1;...) for OpenFlow queues; see below); repeatable")
	f.StringArray("port-rate", nil, "IFNAME=RATE: emulated line rate of a --port, e.g. 10mbit; repeatable")
	f.StringArray("port-delay", nil, "IFNAME=TIME[,limit=SIZE]: one-way delay line on a --port, e.g. 15ms; repeatable")
	f.StringArray("port-loss", nil, "IFNAME=SPEC: loss on a --port, e.g. 1% or gemodel,p=1%,r=25%; repeatable")
}

// parseLinkEmu reads the link-emulation flags into one egress.Config per
// interface that has any. Every error is a usage error naming the flag,
// the entry and the bad part.
func parseLinkEmu(v *viper.Viper, ifnames []string) (map[string]egress.Config, error) {
	ports := map[string]bool{}
	for _, n := range ifnames {
		ports[n] = true
	}
	cfgs := map[string]egress.Config{}
	for _, flag := range []string{"port-qdisc", "port-rate", "port-delay", "port-loss"} {
		seen := map[string]bool{}
		for _, entry := range v.GetStringSlice(flag) {
			ifname, spec, ok := strings.Cut(entry, "=")
			ifname, spec = strings.TrimSpace(ifname), strings.TrimSpace(spec)
			switch {
			case !ok || ifname == "" || spec == "":
				return nil, usageErrorf("--%s %q: want IFNAME=SPEC", flag, entry)
			case !ports[ifname]:
				return nil, usageErrorf("--%s %q: %s is not a --port interface", flag, entry, ifname)
			case seen[ifname]:
				return nil, usageErrorf("--%s: %s given twice", flag, ifname)
			}
			seen[ifname] = true
			c := cfgs[ifname]
			if err := applyLinkEmu(&c, flag, spec); err != nil {
				return nil, usageErrorf("--%s %q: %w", flag, entry, err)
			}
			cfgs[ifname] = c
		}
	}
	return cfgs, nil
}

func applyLinkEmu(c *egress.Config, flag, spec string) error {
	var err error
	switch flag {
	case "port-qdisc":
		c.Qdisc, err = netsim.ParseQdisc(spec)
	case "port-rate":
		c.Rate, err = netsim.ParseRate(spec)
	case "port-loss":
		c.Loss, err = netsim.ParseLoss(spec)
	case "port-delay":
		d, rest, _ := strings.Cut(spec, ",")
		if c.Delay, err = netsim.ParseTime(d); err != nil {
			return err
		}
		if rest != "" {
			k, val, _ := strings.Cut(rest, "=")
			if strings.TrimSpace(k) != "limit" {
				return fmt.Errorf("unknown parameter %q (want limit=SIZE)", rest)
			}
			if c.DelayLimit, err = netsim.ParseSize(val); err != nil {
				return fmt.Errorf("limit: %w", err)
			}
		}
	}
	return err
}

// emulatedPort is a Linux port whose Transmit goes through its emulated
// link; the rest (number, name, address, features) is the port's.
type emulatedPort struct {
	*afport.Port
	eg *egress.Shaper
}

func (p *emulatedPort) Transmit(frame []byte) error { return p.eg.Transmit(frame) }

// The queues of a prio qdisc are the port's OpenFlow queues
// (softswitch.QueuedPort): ENQUEUE targets, QUEUE_GET_CONFIG, QUEUE stats.
func (p *emulatedPort) NumQueues() int { return p.eg.NumQueues() }

func (p *emulatedPort) TransmitQueue(frame []byte, queue uint32) error {
	return p.eg.TransmitQueue(frame, queue)
}

func (p *emulatedPort) QueueStats(queue uint32) softswitch.QueueCounters {
	s := p.eg.QueueStats(int(queue))
	return softswitch.QueueCounters{TxPackets: s.Dequeued, TxBytes: s.DequeuedBytes, TxErrors: s.Dropped}
}
