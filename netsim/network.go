package netsim

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/packet"
)

// SwitchNode is a switch model as the network sees it: something with
// ports that links attach to. The simulator's is the software switch with
// its modelled pipeline; a test's can be a hub.
type SwitchNode interface {
	// AddPort adds port no named name. The switch transmits on the port by
	// calling tx (the frame is the callee's to keep) and returns what
	// frames arriving on the port are handed to.
	AddPort(no uint16, name string, tx func(frame []byte)) (rx func(frame []byte), err error)
}

// BuildOptions say how to build a Plan.
type BuildOptions struct {
	// Switch makes the model of plan switch i. Required when the plan has
	// switches.
	Switch func(i int, s PlanSwitch) (SwitchNode, error)
	// DefaultDelay is the delay of links that declare none.
	DefaultDelay time.Duration
	// Recorder, if set, records time series of every link and host.
	Recorder *Recorder
}

// LinkPair is both directions of a built link: AB carries frames from end
// A to end B.
type LinkPair struct {
	Name   string
	Plan   PlanLink
	AB, BA *Link
}

// Network is a built topology: hosts and links on a clock, switches
// attached through their SwitchNode.
type Network struct {
	Plan     *Plan
	Hosts    []*Host
	Switches []SwitchNode
	Links    []*LinkPair
	clk      clock.Clock
	pool     Pool[Packet] // recycled descriptors
}

// Build makes the network of plan on clk.
func Build(clk clock.Clock, plan *Plan, opts BuildOptions) (*Network, error) {
	n := &Network{Plan: plan, clk: clk}
	for _, ph := range plan.Hosts {
		h := NewHost(clk, ph.Name)
		for _, f := range ph.Ifaces {
			if _, err := h.AddIface(f.Name, f.MAC, f.Prefix); err != nil {
				return nil, err
			}
		}
		n.Hosts = append(n.Hosts, h)
	}
	if plan.StaticARP {
		for i, h := range n.Hosts {
			for j, o := range plan.Hosts {
				if i == j {
					continue
				}
				for _, f := range o.Ifaces {
					h.AddNeighbor(f.Prefix.Addr(), f.MAC)
				}
			}
		}
	}
	if len(plan.Switches) > 0 && opts.Switch == nil {
		return nil, fmt.Errorf("netsim: build %s: no switch model (BuildOptions.Switch)", plan.Name)
	}
	for i, s := range plan.Switches {
		sw, err := opts.Switch(i, s)
		if err != nil {
			return nil, fmt.Errorf("netsim: build %s: switch %s: %w", plan.Name, s.Name, err)
		}
		n.Switches = append(n.Switches, sw)
	}
	// Each link end: where its frames go in (rx) and what it sends on.
	for _, pl := range plan.Links {
		lp := &LinkPair{Name: pl.Name(), Plan: pl}
		delay := opts.DefaultDelay
		if pl.HasDelay {
			delay = pl.Delay
		}
		var rxA, rxB func([]byte)
		mk := func(qspec string, to *func([]byte), dir string) (*Link, error) {
			q, err := ParseQdisc(qspec)
			if err != nil {
				return nil, err
			}
			c := LinkConfig{Rate: pl.Rate, Delay: delay, MTU: pl.MTU, Qdisc: q,
				Deliver: func(p *Packet) {
					f := p.Frame
					if p.ECN == CE {
						markCE(f)
					}
					n.recycle(p)
					(*to)(f)
				},
				Drop: func(p *Packet, _ DropReason) { n.recycle(p) },
			}
			if pl.Loss != "" {
				if c.Loss, err = ParseLoss(pl.Loss); err != nil {
					return nil, err
				}
			}
			l, err := NewLink(clk, c)
			if err != nil {
				return nil, fmt.Errorf("netsim: link %s (%s): %w", lp.Name, dir, err)
			}
			return l, nil
		}
		var err error
		if lp.AB, err = mk(pl.QdiscA, &rxB, "a→b"); err != nil {
			return nil, err
		}
		if lp.BA, err = mk(pl.QdiscB, &rxA, "b→a"); err != nil {
			return nil, err
		}
		attach := func(e End, out *Link, rx *func([]byte)) error {
			tx := n.sender(out)
			switch e.Kind {
			case NodeHost:
				i := n.Hosts[e.Node].Ifaces()[e.Iface]
				i.SetTransmit(tx)
				*rx = i.Receive
			case NodeSwitch:
				r, err := n.Switches[e.Node].AddPort(e.Port, portName(plan.Switches[e.Node].Name, e.Port), tx)
				if err != nil {
					return fmt.Errorf("netsim: build %s: port %s: %w", plan.Name, e.Name, err)
				}
				*rx = r
			}
			return nil
		}
		if err := attach(pl.A, lp.AB, &rxA); err != nil {
			return nil, err
		}
		if err := attach(pl.B, lp.BA, &rxB); err != nil {
			return nil, err
		}
		n.Links = append(n.Links, lp)
	}
	if r := opts.Recorder; r != nil {
		r.attach(clk, n)
	}
	return n, nil
}

// portName is "s1-eth2", Mininet's naming.
func portName(sw string, no uint16) string { return fmt.Sprintf("%s-eth%d", sw, no) }

// Host returns the host named name.
func (n *Network) Host(name string) (*Host, bool) {
	if i, ok := n.Plan.Host(name); ok {
		return n.Hosts[i], true
	}
	return nil, false
}

// sender returns the function a link end transmits with: it wraps the frame
// in a (recycled) descriptor and offers it to the link.
func (n *Network) sender(l *Link) func(frame []byte) {
	return func(frame []byte) {
		p := n.pool.Get()
		*p = Packet{Len: len(frame), ECN: frameECN(frame), Frame: frame}
		l.Send(p)
	}
}

func (n *Network) recycle(p *Packet) {
	*p = Packet{}
	n.pool.Put(p)
}

// ipv4Header returns the offset of an untagged or singly tagged IPv4
// header in frame, or -1.
func ipv4Header(f []byte) int {
	if len(f) < packet.EthernetLen+packet.IPv4MinLen {
		return -1
	}
	off, typ := packet.EthernetLen, binary.BigEndian.Uint16(f[12:14])
	if packet.EtherType(typ) == packet.EtherTypeVLAN && len(f) >= off+4+packet.IPv4MinLen {
		typ = binary.BigEndian.Uint16(f[16:18])
		off += 4
	}
	if packet.EtherType(typ) != packet.EtherTypeIPv4 || f[off]>>4 != 4 {
		return -1
	}
	return off
}

// frameECN is the ECN field of an IPv4 frame (Not-ECT for anything else).
func frameECN(f []byte) ECN {
	if off := ipv4Header(f); off >= 0 {
		return ECN(f[off+1] & 3)
	}
	return NotECT
}

// markCE sets the frame's ECN field to CE, updating the header checksum
// incrementally (RFC 1624), as a marking router rewrites the packet.
func markCE(f []byte) {
	off := ipv4Header(f)
	if off < 0 || f[off+1]&3 == 3 {
		return
	}
	old := binary.BigEndian.Uint16(f[off:])
	f[off+1] |= 3
	sum := packet.UpdateChecksum16(binary.BigEndian.Uint16(f[off+10:]), old, binary.BigEndian.Uint16(f[off:]))
	binary.BigEndian.PutUint16(f[off+10:], sum)
}
