package netsim

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/packet"
)

// Endpoint is what attaches to a Host's demultiplexer: a probe, a
// responder, a TCP endpoint. Receive is handed every IPv4 packet addressed
// to the host that its Binding selects, decoded (checksums verified). p is
// the host's scratch packet and is valid only during the call; frame is
// the received frame, whose bytes the endpoint may keep (nothing reuses
// them).
type Endpoint interface {
	Receive(p *packet.Packet, frame []byte)
}

// EndpointFunc adapts a function to Endpoint.
type EndpointFunc func(p *packet.Packet, frame []byte)

func (f EndpointFunc) Receive(p *packet.Packet, frame []byte) { f(p, frame) }

// Binding selects the packets an Endpoint receives: an IP protocol, a local
// port (TCP, UDP; 0 = every port) and a local address (the zero Addr =
// every address of the host). The most specific binding wins: address and
// port, then port, then address, then protocol only.
type Binding struct {
	Proto packet.IPProtocol
	Port  uint16
	Addr  netip.Addr
}

// SendFunc sends one IPv4 packet from the host: the caller fills
// p.Layers (IPv4 plus TCP, UDP or ICMP), the IPv4 addresses and the
// transport header and payload; the host picks the interface (the one
// whose prefix holds the destination, else the first), fills the Ethernet
// header from its ARP cache, builds the frame with its checksums and puts
// it on the link. An unresolved destination is ARPed for and the frame
// held (a bounded queue per address) until the reply comes. p is not kept.
type SendFunc func(p *packet.Packet) error

// HostStats are a host's counters.
type HostStats struct {
	Received uint64 // frames handed to the host by its links
	// NotForUs counts frames to another unicast MAC or IPv4 address (a
	// switch flooding them), ignored as a NIC and stack would.
	NotForUs    uint64
	Malformed   uint64 // frames the packet codec rejected
	BadChecksum uint64 // IPv4 packets with a wrong IP or transport checksum
	NoEndpoint  uint64 // IPv4 packets no binding selects
	Delivered   uint64 // packets handed to an endpoint
	Sent        uint64 // frames put on a link (ARP included)
	ARPRequests uint64 // requests sent (resolutions and announcements)
	ARPReplies  uint64 // replies sent
	// Unresolved counts packets dropped waiting for ARP: the hold queue of
	// their address was full.
	Unresolved  uint64
	EchoReplies uint64 // ICMP echo requests answered
}

// Iface is one interface of a Host. Its link end is set when the network
// is built (SetTransmit); frames arriving on the link go to Receive.
type Iface struct {
	Name   string
	MAC    packet.MAC
	Prefix netip.Prefix
	host   *Host
	tx     func(frame []byte)
}

// Host returns the interface's host.
func (i *Iface) Host() *Host { return i.host }

// SetTransmit sets what the interface puts its frames on (its link). The
// frame is the callee's to keep.
func (i *Iface) SetTransmit(tx func(frame []byte)) { i.tx = tx }

// holdLimit bounds the frames waiting for one ARP resolution (Linux's
// unres_qlen is of this order).
const holdLimit = 64

// Host is an end host on a clock.Clock: interfaces with IPv4 addresses,
// ARP (static entries, answers requests for its addresses, learns from
// replies and from requests to it, announces itself with a gratuitous
// ARP), an ICMP echo responder and a demultiplexer for Endpoints. It is
// sans-I/O and, like a Link, not safe for concurrent use.
type Host struct {
	Name   string
	clk    clock.Clock
	ifaces []*Iface
	arp    map[netip.Addr]packet.MAC
	static map[netip.Addr]bool // permanent entries: ARP does not change them
	hold   map[netip.Addr][][]byte
	bind   map[Binding]Endpoint
	stats  HostStats
	// firstErr is the first checksum or codec error, for a model that
	// treats any as a bug (the simulator builds every frame itself).
	firstErr error
	// observe, if set, sees every packet delivered to an endpoint (time
	// series).
	observe func(p *packet.Packet, frameLen int)

	pkt packet.Packet // receive scratch
	out packet.Packet // echo-reply and ARP scratch
}

// NewHost returns a host without interfaces.
func NewHost(clk clock.Clock, name string) *Host {
	return &Host{Name: name, clk: clk, arp: map[netip.Addr]packet.MAC{}, static: map[netip.Addr]bool{},
		hold: map[netip.Addr][][]byte{}, bind: map[Binding]Endpoint{}}
}

// AddIface adds an interface with the address prefix (e.g. 10.0.0.1/24).
// Addresses must be IPv4 and unique on the host.
func (h *Host) AddIface(name string, mac packet.MAC, prefix netip.Prefix) (*Iface, error) {
	if !prefix.IsValid() || !prefix.Addr().Is4() {
		return nil, fmt.Errorf("netsim: host %s: interface %s: address %v: want an IPv4 prefix such as 10.0.0.1/24", h.Name, name, prefix)
	}
	for _, i := range h.ifaces {
		if i.Name == name {
			return nil, fmt.Errorf("netsim: host %s: duplicate interface %s", h.Name, name)
		}
		if i.Prefix.Addr() == prefix.Addr() {
			return nil, fmt.Errorf("netsim: host %s: address %v on both %s and %s", h.Name, prefix.Addr(), i.Name, name)
		}
	}
	i := &Iface{Name: name, MAC: mac, Prefix: prefix, host: h}
	h.ifaces = append(h.ifaces, i)
	return i, nil
}

// Ifaces returns the host's interfaces in the order added.
func (h *Host) Ifaces() []*Iface { return h.ifaces }

// Addr is the host's first address (the zero Addr without interfaces).
func (h *Host) Addr() netip.Addr {
	if len(h.ifaces) == 0 {
		return netip.Addr{}
	}
	return h.ifaces[0].Prefix.Addr()
}

// AddNeighbor puts a static entry in the ARP cache (ip neigh ... permanent).
func (h *Host) AddNeighbor(ip netip.Addr, mac packet.MAC) { h.arp[ip], h.static[ip] = mac, true }

// Neighbor looks ip up in the ARP cache.
func (h *Host) Neighbor(ip netip.Addr) (packet.MAC, bool) { m, ok := h.arp[ip]; return m, ok }

// Stats returns the counters.
func (h *Host) Stats() HostStats { return h.stats }

// Err is the first codec or checksum error seen on receive, if any.
func (h *Host) Err() error { return h.firstErr }

// SetObserver makes f see every packet delivered to an endpoint (nil: off).
func (h *Host) SetObserver(f func(p *packet.Packet, frameLen int)) { h.observe = f }

// Attach binds ep and returns the function it sends with.
func (h *Host) Attach(b Binding, ep Endpoint) (SendFunc, error) {
	if ep == nil {
		return nil, fmt.Errorf("netsim: host %s: nil endpoint", h.Name)
	}
	if b.Addr.IsValid() && !h.hasAddr(b.Addr) {
		return nil, fmt.Errorf("netsim: host %s: bind %v: not an address of the host", h.Name, b.Addr)
	}
	if _, dup := h.bind[b]; dup {
		return nil, fmt.Errorf("netsim: host %s: %v port %d address %v already bound", h.Name, b.Proto, b.Port, b.Addr)
	}
	h.bind[b] = ep
	return h.Send, nil
}

// Detach removes a binding.
func (h *Host) Detach(b Binding) { delete(h.bind, b) }

func (h *Host) hasAddr(a netip.Addr) bool {
	for _, i := range h.ifaces {
		if i.Prefix.Addr() == a {
			return true
		}
	}
	return false
}

// route picks the interface for dst: the first whose prefix holds it,
// else the first interface (the default route).
func (h *Host) route(dst netip.Addr) *Iface {
	for _, i := range h.ifaces {
		if i.Prefix.Contains(dst) {
			return i
		}
	}
	if len(h.ifaces) > 0 {
		return h.ifaces[0]
	}
	return nil
}

var errNoIface = errors.New("no interface")

// Send is the host's SendFunc.
func (h *Host) Send(p *packet.Packet) error {
	if !p.Layers.Has(packet.LayerIPv4) {
		return fmt.Errorf("netsim: host %s: send: not an IPv4 packet", h.Name)
	}
	dst := netip.AddrFrom4(p.IPv4.Dst)
	i := h.route(dst)
	if i == nil || i.tx == nil {
		return fmt.Errorf("netsim: host %s: send to %v: %w", h.Name, dst, errNoIface)
	}
	p.Layers |= packet.LayerEthernet
	p.Ethernet.Src = i.MAC
	mac, known := h.arp[dst]
	p.Ethernet.Dst = mac
	// One allocation: room for a tag, IPv4 and TCP headers with options.
	frame, err := p.AppendBinary(make([]byte, 0, max(packet.MinFrameLen, 18+60+60+len(p.IPv4.Options)+len(p.Payload))))
	if err != nil {
		return fmt.Errorf("netsim: host %s: send to %v: %w", h.Name, dst, err)
	}
	if known {
		h.transmit(i, frame)
		return nil
	}
	q, waiting := h.hold[dst]
	if len(q) >= holdLimit {
		h.stats.Unresolved++
		return nil
	}
	h.hold[dst] = append(q, frame)
	if !waiting {
		h.arpRequest(i, dst)
	}
	return nil
}

func (h *Host) transmit(i *Iface, frame []byte) {
	h.stats.Sent++
	i.tx(frame)
}

// Announce sends a gratuitous ARP (a broadcast request for its own
// address) on every interface, as a host does when its link comes up.
func (h *Host) Announce() {
	for _, i := range h.ifaces {
		if i.tx != nil {
			h.arpRequest(i, i.Prefix.Addr())
		}
	}
}

func (h *Host) arpRequest(i *Iface, target netip.Addr) {
	o := &h.out
	*o = packet.Packet{Layers: packet.LayerEthernet | packet.LayerARP}
	o.Ethernet.Src, o.Ethernet.Dst = i.MAC, packet.Broadcast
	o.ARP = packet.ARP{Op: packet.ARPRequest, SenderMAC: i.MAC, SenderIP: i.Prefix.Addr().As4(), TargetIP: target.As4()}
	frame, err := o.AppendBinary(make([]byte, 0, packet.MinFrameLen))
	if err != nil { // cannot happen for a well-formed ARP; keep the error
		h.fail(err)
		return
	}
	h.stats.ARPRequests++
	h.transmit(i, frame)
}

func (h *Host) fail(err error) {
	if h.firstErr == nil {
		h.firstErr = fmt.Errorf("netsim: host %s: %w", h.Name, err)
	}
}

// Receive is a frame arriving on interface i.
func (i *Iface) Receive(frame []byte) { i.host.receive(i, frame) }

func (h *Host) receive(i *Iface, frame []byte) {
	h.stats.Received++
	p := &h.pkt
	if err := p.DecodeFromBytes(frame); err != nil {
		h.stats.Malformed++
		h.fail(err)
		return
	}
	if d := p.Ethernet.Dst; d != i.MAC && d[0]&1 == 0 {
		h.stats.NotForUs++
		return
	}
	switch {
	case p.Layers.Has(packet.LayerARP):
		h.receiveARP(i, &p.ARP)
	case p.Layers.Has(packet.LayerIPv4):
		h.receiveIPv4(i, p, frame)
	default:
		h.stats.NotForUs++
	}
}

func (h *Host) receiveARP(i *Iface, a *packet.ARP) {
	sender, target := netip.AddrFrom4(a.SenderIP), netip.AddrFrom4(a.TargetIP)
	mine := target == i.Prefix.Addr()
	// Learn as Linux does without arp_accept: from replies and requests to
	// us; a gratuitous ARP only refreshes an entry we already have.
	if _, have := h.arp[sender]; mine || have || a.Op == packet.ARPReply {
		if sender.IsValid() && sender != i.Prefix.Addr() && !h.static[sender] {
			h.arp[sender] = a.SenderMAC
			h.release(i, sender, a.SenderMAC)
		}
	}
	if !mine || a.Op != packet.ARPRequest || sender == target {
		if !mine {
			h.stats.NotForUs++
		}
		return
	}
	o := &h.out
	*o = packet.Packet{Layers: packet.LayerEthernet | packet.LayerARP}
	o.Ethernet.Src, o.Ethernet.Dst = i.MAC, a.SenderMAC
	o.ARP = packet.ARP{Op: packet.ARPReply, SenderMAC: i.MAC, SenderIP: a.TargetIP,
		TargetMAC: a.SenderMAC, TargetIP: a.SenderIP}
	frame, err := o.AppendBinary(make([]byte, 0, packet.MinFrameLen))
	if err != nil {
		h.fail(err)
		return
	}
	h.stats.ARPReplies++
	h.transmit(i, frame)
}

// release sends the frames held for ip, now that its MAC is known.
func (h *Host) release(i *Iface, ip netip.Addr, mac packet.MAC) {
	q := h.hold[ip]
	if q == nil {
		return
	}
	delete(h.hold, ip)
	for _, f := range q {
		copy(f[0:6], mac[:])
		h.transmit(i, f)
	}
}

func (h *Host) receiveIPv4(i *Iface, p *packet.Packet, frame []byte) {
	dst := netip.AddrFrom4(p.IPv4.Dst)
	if !h.hasAddr(dst) {
		h.stats.NotForUs++
		return
	}
	if err := p.VerifyChecksums(); err != nil {
		h.stats.BadChecksum++
		h.fail(err)
		return
	}
	var port uint16
	switch {
	case p.Layers.Has(packet.LayerTCP):
		port = p.TCP.DstPort
	case p.Layers.Has(packet.LayerUDP):
		port = p.UDP.DstPort
	case p.Layers.Has(packet.LayerICMP) && p.ICMP.Type == packet.ICMPEchoRequest:
		if _, bound := h.bind[Binding{Proto: packet.IPProtocolICMP}]; !bound {
			h.echoReply(p)
			return
		}
	}
	proto := p.IPv4.Protocol
	ep := h.bind[Binding{Proto: proto, Port: port, Addr: dst}]
	if ep == nil {
		ep = h.bind[Binding{Proto: proto, Port: port}]
	}
	if ep == nil && port != 0 {
		if ep = h.bind[Binding{Proto: proto, Addr: dst}]; ep == nil {
			ep = h.bind[Binding{Proto: proto}]
		}
	}
	if ep == nil {
		h.stats.NoEndpoint++
		return
	}
	h.stats.Delivered++
	if h.observe != nil {
		h.observe(p, len(frame))
	}
	ep.Receive(p, frame)
}

// echoReply answers an ICMP echo request (no endpoint bound to ICMP).
func (h *Host) echoReply(req *packet.Packet) {
	o := &h.out
	*o = packet.Packet{Layers: packet.LayerIPv4 | packet.LayerICMP}
	o.IPv4 = packet.IPv4{TTL: 64, Src: req.IPv4.Dst, Dst: req.IPv4.Src, ID: req.IPv4.ID}
	o.ICMP = packet.ICMP{Type: packet.ICMPEchoReply, ID: req.ICMP.ID, Seq: req.ICMP.Seq}
	o.Payload = req.Payload
	if err := h.Send(o); err != nil {
		h.fail(err)
		return
	}
	h.stats.EchoReplies++
}

// DefaultMAC is the MAC a host interface gets when none is given: 02:00
// (locally administered) followed by its IPv4 address, stable and unique
// per address.
func DefaultMAC(a netip.Addr) packet.MAC {
	b := a.As4()
	return packet.MAC{0x02, 0x00, b[0], b[1], b[2], b[3]}
}
