package softswitch

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pseudocong/pseudocong/openflow"
)

// Port is one switch port as the core sees it. The core calls Transmit
// from its outbox drain, never with its lock held, so a Transmit that hands
// the frame straight to another switch (or back into this one) is safe.
type Port interface {
	// No is the OpenFlow port number (1..openflow.PortMax, or
	// openflow.PortLocal for the local port).
	No() uint16
	// Name is the interface name shown by ovs-ofctl show (16 bytes max on
	// the wire).
	Name() string
	// HWAddr is the port's MAC address; PORT_MOD must quote it.
	HWAddr() [6]byte
	// Transmit sends one frame. The frame is the port's to keep. It must
	// not block for long: a port with a queue bounds it and drops (and
	// returns an error, counted as tx_dropped).
	Transmit(frame []byte) error
}

// PortFeatureser is optionally implemented by a Port to report its
// ofp_port_features (current, advertised, supported, peer). Ports without
// it report 1 Gb/s full duplex copper.
type PortFeatureser interface {
	Features() (curr, advertised, supported, peer uint32)
}

// defaultFeatures is what an in-memory port claims to be.
const defaultFeatures = openflow.PortFeature1GbFD | openflow.PortFeatureCopper

// portState is the core's view of one port: the Port, the config bits
// PORT_MOD changes, the state bits, and the counters PORT stats report.
type portState struct {
	port   Port
	config uint32
	state  uint32
	adv    uint32 // advertised features set by PORT_MOD (0 = port's own)
	stats  openflow.PortStats
	// rxC, txC are the port's pseudocong_switch_packets_{received,
	// forwarded}_total children (nil without Metrics).
	rxC, txC prometheus.Counter
	filter   PortFilter // seam (d); nil: none
}

func (p *portState) phyPort() openflow.PhyPort {
	curr, adv, sup, peer := defaultFeatures, defaultFeatures, defaultFeatures, uint32(0)
	if f, ok := p.port.(PortFeatureser); ok {
		curr, adv, sup, peer = f.Features()
	}
	if p.adv != 0 {
		adv = p.adv
	}
	name := p.port.Name()
	if len(name) > 15 {
		name = name[:15] // ofp_phy_port.name is 16 bytes, NUL terminated
	}
	return openflow.PhyPort{
		PortNo: p.port.No(), HWAddr: p.port.HWAddr(), Name: name,
		Config: p.config, State: p.state,
		Curr: curr, Advertised: adv, Supported: sup, Peer: peer,
	}
}

// canForward reports whether a frame may be sent out of the port.
func (p *portState) canForward() bool {
	return p.config&(openflow.PortConfigPortDown|openflow.PortConfigNoFwd) == 0 &&
		p.state&openflow.PortStateLinkDown == 0
}

// floodable reports whether FLOOD includes the port.
func (p *portState) floodable() bool {
	return p.canForward() && p.config&openflow.PortConfigNoFlood == 0
}

func validPortNo(no uint16) error {
	if (no == 0 || no > openflow.PortMax) && no != openflow.PortLocal {
		return fmt.Errorf("softswitch: port number %d is not a physical port (1..%d) or LOCAL", no, openflow.PortMax)
	}
	return nil
}

// QueuedPort is optionally implemented by a Port with OpenFlow queues, the
// targets of ENQUEUE: queue ids 0..NumQueues()-1. OUTPUT to such a port
// uses queue 0. A port that does not implement it, or has no queues, has
// none: QUEUE_GET_CONFIG and QUEUE stats report none, and ENQUEUE sends
// out of it as OUTPUT does (Open vSwitch's behaviour for a port without
// QoS). The core calls QueueStats with its lock held: it must not call
// back into the switch.
type QueuedPort interface {
	Port
	NumQueues() int
	// TransmitQueue is Transmit into queue id; the core calls it only for
	// ids below NumQueues.
	TransmitQueue(frame []byte, queue uint32) error
	// QueueStats are queue id's counters.
	QueueStats(queue uint32) QueueCounters
}

// QueueCounters are one queue's ofp_queue_stats counters: frames and bytes
// that left the queue, and frames it dropped.
type QueueCounters struct {
	TxPackets, TxBytes, TxErrors uint64
}

// numQueues is the port's queue count (0 for a port without queues).
func (p *portState) numQueues() int {
	if q, ok := p.port.(QueuedPort); ok {
		return q.NumQueues()
	}
	return 0
}
