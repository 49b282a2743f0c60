package afport

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/pseudocong/pseudocong/internal/afsock"
	"github.com/pseudocong/pseudocong/openflow"
)

// Core is what a port needs of the switch: *softswitch.Switch satisfies
// it. Receive takes ownership of the frame.
type Core interface {
	Receive(inPort uint16, frame []byte)
	SetLinkDown(no uint16, down bool) error
}

// Options configures a Port.
type Options struct {
	// No is the OpenFlow port number (1..openflow.PortMax).
	No uint16
	// IfName is the Linux interface, in the calling thread's namespace.
	IfName string
	// TPacketVersion is the receive ring version, 2 (default: per-frame
	// wake-up, no added latency) or 3 (block-batched; adds up to the
	// block timeout per frame on a quiet link). See afsock.DefaultVersion.
	TPacketVersion int
	// BlockTimeout: TPACKET_V3's block retire timeout (default 1 ms).
	BlockTimeout time.Duration
	// Logger: default discard.
	Logger *slog.Logger
}

// Port is a switch port on a Linux interface. It implements
// softswitch.Port (No, Name, HWAddr, Transmit) and
// softswitch.PortFeatureser.
//
// The port is the interface *name*: when the interface goes down the port
// reports link down and its socket waits; when an interface of that name
// is up again — the same one, or a new one after the old was deleted —
// the port reports link up and its socket rebinds to it. The port number
// never changes.
type Port struct {
	no   uint16
	name string
	sock *afsock.Socket
	log  *slog.Logger
	// ns is the namespace Open ran in; link subscriptions and look-ups
	// are made there, whichever thread the watcher runs on.
	ns netns.NsHandle
	nl *netlink.Handle

	mu      sync.Mutex
	started bool
	done    chan struct{} // closed by Close: stops the link watcher
	wg      sync.WaitGroup

	// core is set by Start, before the goroutines that use it start.
	core Core
	// linkMu serializes link reports, which come from the link watcher
	// (kernel link changes) and from the socket's reader (bound or not),
	// so that the last report made is computed from the latest of both.
	linkMu     sync.Mutex
	kernelUp   bool // the kernel's carrier state, last seen
	reported   bool // a state has been reported
	reportedUp bool
}

// Open opens the interface. The port does not deliver frames until Start.
func Open(o Options) (*Port, error) {
	if o.No == 0 || o.No > openflow.PortMax {
		return nil, fmt.Errorf("afport %s: port number %d outside 1..%d", o.IfName, o.No, openflow.PortMax)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	log := o.Logger.With("port", o.No, "iface", o.IfName)
	ns, err := netns.Get()
	if err != nil {
		return nil, fmt.Errorf("afport %s: current network namespace: %w", o.IfName, err)
	}
	nl, err := netlink.NewHandleAt(ns)
	if err != nil {
		ns.Close()
		return nil, fmt.Errorf("afport %s: netlink: %w", o.IfName, err)
	}
	p := &Port{
		no:   o.No,
		name: o.IfName,
		log:  log,
		ns:   ns,
		nl:   nl,
		done: make(chan struct{}),
	}
	sock, err := afsock.Open(afsock.Options{IfName: o.IfName, Version: o.TPacketVersion, BlockTimeout: o.BlockTimeout,
		Promiscuous: true, Logger: o.Logger.With("port", o.No), OnBound: p.socketBound})
	if err != nil {
		nl.Close()
		ns.Close()
		return nil, err
	}
	p.sock = sock
	return p, nil
}

// No implements softswitch.Port.
func (p *Port) No() uint16 { return p.no }

// Name implements softswitch.Port.
func (p *Port) Name() string { return p.name }

// HWAddr implements softswitch.Port: the MAC of the interface the port is
// (or was last) bound to, which a re-created interface may have changed.
func (p *Port) HWAddr() [6]byte {
	var a [6]byte
	copy(a[:], p.sock.HWAddr())
	return a
}

// Transmit implements softswitch.Port: one write to the socket. Frames
// shorter than an Ethernet header or longer than the interface MTU fail
// (counted by the switch as tx_dropped), as do frames sent while the
// interface is down or missing.
func (p *Port) Transmit(frame []byte) error { return p.sock.Write(frame) }

// Features implements softswitch.PortFeatureser: 10 Gb/s full duplex
// copper, the speed class of a veth (the kernel reports 10000 Mb/s).
func (p *Port) Features() (curr, advertised, supported, peer uint32) {
	f := uint32(openflow.PortFeature10GbFD | openflow.PortFeatureCopper)
	return f, f, f, 0
}

// Stats returns the socket's counters.
func (p *Port) Stats() afsock.Stats { return p.sock.Stats() }

// Start reports the current link state to core and starts delivering
// frames to core.Receive and link changes to core.SetLinkDown. Call it
// after adding the port to the switch.
func (p *Port) Start(core Core) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.started {
		return fmt.Errorf("afport %s: already started", p.name)
	}
	p.started = true
	p.core = core

	sub, err := p.subscribe()
	if err != nil {
		return fmt.Errorf("afport %s: subscribe to link changes: %w", p.name, err)
	}
	// Read the state after subscribing, so no change falls in between.
	p.syncLink(core)

	p.wg.Add(2)
	go func() {
		defer p.wg.Done()
		p.watchLink(core, sub)
	}()
	go func() {
		defer p.wg.Done()
		// Run returns only at Close: interface outages are its business.
		if err := p.sock.Run(func(frame []byte, _ time.Time) { core.Receive(p.no, frame) }); err != nil {
			p.log.Error("port receive stopped", "err", err)
		}
	}()
	return nil
}

// subscription is one netlink link-change subscription.
type subscription struct {
	updates chan netlink.LinkUpdate
	stop    chan struct{} // closing it closes the subscription's socket
}

// end closes the subscription and drains it, so that netlink's reader,
// possibly blocked sending an update, can see its socket closed and exit.
func (s subscription) end() {
	close(s.stop)
	go func() {
		for range s.updates {
		}
	}()
}

// subscribeQueue is the update channel's length. A burst beyond it waits
// in the netlink socket's buffer; beyond that the kernel drops and the
// subscription fails (ENOBUFS), which watchLink recovers from.
const subscribeQueue = 64

func (p *Port) subscribe() (subscription, error) {
	s := subscription{updates: make(chan netlink.LinkUpdate, subscribeQueue), stop: make(chan struct{})}
	ns := p.ns
	err := netlink.LinkSubscribeWithOptions(s.updates, s.stop, netlink.LinkSubscribeOptions{
		Namespace: &ns,
		// Every link event of the namespace arrives here, and a test
		// machine creates and deletes veths by the hundred.
		ReceiveBufferSize: 1 << 20,
		ErrorCallback: func(err error) {
			select {
			case <-s.stop: // closing the subscription makes its read fail
			default:
				p.log.Warn("link subscription", "err", err)
			}
		},
	})
	if err != nil {
		close(s.stop)
		return subscription{}, err
	}
	return s, nil
}

// The resubscription back-off after a lost subscription.
const (
	minResubscribe = 50 * time.Millisecond
	maxResubscribe = 5 * time.Second
)

// watchLink follows sub until Close. If the subscription fails (the
// kernel dropped events: ENOBUFS), it subscribes again with back-off and
// re-reads the link state, since changes may have been lost.
func (p *Port) watchLink(core Core, sub subscription) {
	for {
		lost := p.follow(core, sub.updates)
		sub.end()
		if !lost {
			return
		}
		p.log.Warn("link subscription lost; subscribing again")
		var ok bool
		if sub, ok = p.resubscribe(); !ok {
			return
		}
		p.syncLink(core)
	}
}

// resubscribe subscribes again, with back-off; false at Close.
func (p *Port) resubscribe() (subscription, bool) {
	delay := minResubscribe
	for {
		t := time.NewTimer(delay)
		select {
		case <-p.done:
			t.Stop()
			return subscription{}, false
		case <-t.C:
		}
		sub, err := p.subscribe()
		if err == nil {
			return sub, true
		}
		delay = min(2*delay, maxResubscribe)
		p.log.Warn("link subscription", "err", err, "retry_in", delay)
	}
}

// follow applies updates until Close (false) or until the subscription
// is lost (true).
func (p *Port) follow(core Core, updates <-chan netlink.LinkUpdate) bool {
	for {
		select {
		case <-p.done:
			return false
		case u, ok := <-updates:
			if !ok {
				select {
				case <-p.done:
					return false
				default:
					return true
				}
			}
			p.apply(core, u)
		}
	}
}

// apply handles one link update. The port follows the interface name,
// not the index: a deleted and re-created interface has a new index.
func (p *Port) apply(core Core, u netlink.LinkUpdate) {
	a := u.Attrs()
	if a == nil {
		return
	}
	ours := a.Name == p.name
	if u.Header.Type == unix.RTM_DELLINK {
		if ours || a.Index == p.sock.Index() {
			p.setKernelLink(core, false)
		}
		return
	}
	if !ours {
		return
	}
	p.setKernelLink(core, linkUp(a))
	if a.Flags&net.FlagUp != 0 {
		// The socket can bind once the interface is administratively up;
		// tell it now instead of leaving it to its back-off.
		p.sock.Wake()
	}
}

// syncLink reads the link state afresh and reports it.
func (p *Port) syncLink(core Core) {
	link, err := p.nl.LinkByName(p.name)
	var notFound netlink.LinkNotFoundError
	switch {
	case errors.As(err, &notFound):
		p.setKernelLink(core, false)
	case err != nil:
		p.log.Warn("read link state", "err", err)
	default:
		p.setKernelLink(core, linkUp(link.Attrs()))
		if link.Attrs().Flags&net.FlagUp != 0 {
			p.sock.Wake()
		}
	}
}

// setKernelLink records the kernel's link state and reports the port's.
func (p *Port) setKernelLink(core Core, up bool) {
	p.linkMu.Lock()
	defer p.linkMu.Unlock()
	p.kernelUp = up
	p.reportLocked(core)
}

// socketBound is the socket's OnBound: the port is not up until the
// socket is bound, or the first frames forwarded to it after a link up
// would be lost.
func (p *Port) socketBound(bool) {
	p.linkMu.Lock()
	defer p.linkMu.Unlock()
	if p.core != nil {
		p.reportLocked(p.core)
	}
}

// reportLocked tells core the port's link state: up when the kernel's
// link is up and the socket is bound to it. The core sends PORT_STATUS
// only on change.
func (p *Port) reportLocked(core Core) {
	up := p.kernelUp && p.sock.Bound()
	if err := core.SetLinkDown(p.no, !up); err != nil {
		p.log.Warn("set link state", "up", up, "err", err)
		return
	}
	switch {
	case !p.reported:
		p.log.Debug("link state", "up", up)
	case p.reportedUp != up:
		p.log.Info("link state changed", "up", up, "kernel_up", p.kernelUp)
	}
	p.reported, p.reportedUp = true, up
}

// linkUp is the link's carrier: administratively up and lower layer up.
func linkUp(a *netlink.LinkAttrs) bool {
	return a.Flags&net.FlagUp != 0 && a.RawFlags&unix.IFF_LOWER_UP != 0
}

// Close stops delivery and closes the socket.
func (p *Port) Close() error {
	p.mu.Lock()
	select {
	case <-p.done:
		p.mu.Unlock()
		return nil
	default:
	}
	close(p.done)
	p.mu.Unlock()
	err := p.sock.Close()
	p.wg.Wait()
	p.nl.Close()
	p.ns.Close()
	return err
}
