package live

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/pseudocong/pseudocong/internal/afsock"
	"github.com/pseudocong/pseudocong/probes"
	"github.com/pseudocong/pseudocong/testbed"
)

// EndpointConfig configures an Endpoint.
type EndpointConfig struct {
	// Netns is the network namespace to open the socket in ("" = the
	// caller's).
	Netns string
	// Iface is the interface in that namespace.
	Iface string
	// Addrs are the probe addresses this endpoint answers ARP for.
	Addrs []netip.Addr
	// Capture, if set, receives every frame sent and received.
	Capture *Capture
	// TPacketVersion: see afsock.Options (default 2: no added latency).
	TPacketVersion int
	// Logger: default discard.
	Logger *slog.Logger
}

// EndpointStats counts an endpoint's frames.
type EndpointStats struct {
	FramesIn     uint64 // every frame received
	ProbesIn     uint64 // TCP probe segments passed to the receiver
	ARPAnswered  uint64 // ARP requests for our addresses answered
	Ignored      uint64 // everything else
	FramesOut    uint64
	SendFailures uint64
}

// Endpoint is a probe host's raw interface: it sends probe packets as
// frames (a probes.Sender), delivers received probe segments to a
// probes.Receiver, answers ARP for its addresses and learns neighbours'
// MACs from what it receives.
type Endpoint struct {
	sock  *afsock.Socket
	mac   net.HardwareAddr
	owned map[netip.Addr]bool
	cap   *Capture
	log   *slog.Logger
	// parser is used by the single reader goroutine only.
	parser *frameParser

	mu      sync.Mutex
	neigh   map[netip.Addr]net.HardwareAddr
	waiters map[netip.Addr][]chan struct{}

	recv    atomic.Pointer[probes.Receiver]
	running sync.WaitGroup
	stats   struct {
		framesIn, probesIn, arp, ignored, framesOut, sendFail atomic.Uint64
	}
}

// OpenEndpoint opens the raw socket inside cfg.Netns.
func OpenEndpoint(cfg EndpointConfig) (*Endpoint, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	open := func() (*afsock.Socket, error) {
		return afsock.Open(afsock.Options{IfName: cfg.Iface, Version: cfg.TPacketVersion})
	}
	var sock *afsock.Socket
	var err error
	if cfg.Netns == "" {
		sock, err = open()
	} else {
		err = testbed.Do(cfg.Netns, func() (err error) { sock, err = open(); return err })
	}
	if err != nil {
		return nil, fmt.Errorf("endpoint %s/%s: %w", cfg.Netns, cfg.Iface, err)
	}
	e := &Endpoint{
		sock:    sock,
		mac:     sock.HWAddr(),
		owned:   map[netip.Addr]bool{},
		cap:     cfg.Capture,
		log:     cfg.Logger,
		parser:  newFrameParser(),
		neigh:   map[netip.Addr]net.HardwareAddr{},
		waiters: map[netip.Addr][]chan struct{}{},
	}
	for _, a := range cfg.Addrs {
		e.owned[a] = true
	}
	return e, nil
}

// MAC is the interface's MAC address.
func (e *Endpoint) MAC() net.HardwareAddr { return e.mac }

// Start reads frames in the background and delivers probe segments to r
// (which may be set later with SetReceiver; nil drops them).
func (e *Endpoint) Start(r probes.Receiver) {
	e.SetReceiver(r)
	e.running.Add(1)
	go func() {
		defer e.running.Done()
		if err := e.sock.Run(e.handle); err != nil {
			e.log.Error("endpoint receive stopped", "err", err)
		}
	}()
}

// SetReceiver changes where probe segments go.
func (e *Endpoint) SetReceiver(r probes.Receiver) {
	if r == nil {
		e.recv.Store(nil)
		return
	}
	e.recv.Store(&r)
}

func (e *Endpoint) handle(frame []byte, at time.Time) {
	e.stats.framesIn.Add(1)
	e.cap.Write(frame, at)
	d := e.parser.decode(frame) // only the Run goroutine decodes
	switch d.Kind {
	case FrameProbe:
		if !e.owned[d.Probe.Tuple.DstIP] && len(e.owned) > 0 {
			e.stats.ignored.Add(1)
			return
		}
		e.learn(d.Probe.Tuple.SrcIP, d.SrcMAC)
		d.Probe.SentAt = at
		if r := e.recv.Load(); r != nil {
			e.stats.probesIn.Add(1)
			(*r).Deliver(d.Probe)
			return
		}
	case FrameARPRequest:
		e.learn(d.SenderIP, d.SenderMAC)
		if e.owned[d.TargetIP] {
			reply, err := EncodeARP(layers.ARPReply, e.mac, d.TargetIP, d.SenderMAC, d.SenderIP)
			if err == nil && e.write(reply) == nil {
				e.stats.arp.Add(1)
			}
			return
		}
	case FrameARPReply:
		e.learn(d.SenderIP, d.SenderMAC)
		return
	}
	e.stats.ignored.Add(1)
}

func (e *Endpoint) learn(ip netip.Addr, mac net.HardwareAddr) {
	if !ip.IsValid() || len(mac) != 6 {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if old, ok := e.neigh[ip]; ok && string(old) == string(mac) {
		return
	}
	e.neigh[ip] = append(net.HardwareAddr(nil), mac...)
	for _, w := range e.waiters[ip] {
		close(w)
	}
	delete(e.waiters, ip)
}

// SetNeighbor fixes the MAC used for frames to ip (no ARP needed).
func (e *Endpoint) SetNeighbor(ip netip.Addr, mac net.HardwareAddr) { e.learn(ip, mac) }

// Neighbor returns the MAC known for ip.
func (e *Endpoint) Neighbor(ip netip.Addr) (net.HardwareAddr, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	m, ok := e.neigh[ip]
	return m, ok
}

// Resolve finds target's MAC by ARP, asking as from, retrying every
// 200 ms until ctx ends. Start must have been called.
func (e *Endpoint) Resolve(ctx context.Context, target, from netip.Addr) (net.HardwareAddr, error) {
	for {
		e.mu.Lock()
		if m, ok := e.neigh[target]; ok {
			e.mu.Unlock()
			return m, nil
		}
		ch := make(chan struct{})
		e.waiters[target] = append(e.waiters[target], ch)
		e.mu.Unlock()

		req, err := EncodeARP(layers.ARPRequest, e.mac, from, nil, target)
		if err != nil {
			return nil, err
		}
		if err := e.write(req); err != nil {
			return nil, fmt.Errorf("arp %s: %w", target, err)
		}
		select {
		case <-ch:
		case <-time.After(200 * time.Millisecond):
		case <-ctx.Done():
			return nil, fmt.Errorf("arp %s (as %s): no reply: %w", target, from, ctx.Err())
		}
	}
}

// ErrNoNeighbor is returned by Send for a destination whose MAC is unknown.
var ErrNoNeighbor = errors.New("no MAC known for destination")

// Send implements probes.Sender: it frames p and writes it.
func (e *Endpoint) Send(p probes.ProbePacket) error {
	dst, ok := e.Neighbor(p.Tuple.DstIP)
	if !ok {
		e.stats.sendFail.Add(1)
		return fmt.Errorf("send %v: %w", p.Tuple, ErrNoNeighbor)
	}
	frame, err := EncodeFrame(p, e.mac, dst)
	if err != nil {
		e.stats.sendFail.Add(1)
		return err
	}
	return e.write(frame)
}

func (e *Endpoint) write(frame []byte) error {
	now := time.Now()
	if err := e.sock.Write(frame); err != nil {
		e.stats.sendFail.Add(1)
		return err
	}
	e.stats.framesOut.Add(1)
	e.cap.Write(frame, now)
	return nil
}

// Stats returns the counters so far.
func (e *Endpoint) Stats() EndpointStats {
	return EndpointStats{
		FramesIn: e.stats.framesIn.Load(), ProbesIn: e.stats.probesIn.Load(),
		ARPAnswered: e.stats.arp.Load(), Ignored: e.stats.ignored.Load(),
		FramesOut: e.stats.framesOut.Load(), SendFailures: e.stats.sendFail.Load(),
	}
}

// Close stops the reader and closes the socket.
func (e *Endpoint) Close() error {
	err := e.sock.Close()
	e.running.Wait()
	return err
}
