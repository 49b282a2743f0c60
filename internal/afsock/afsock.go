// Package afsock is a raw Ethernet socket on one Linux interface:
// AF_PACKET with a TPACKET_V2 or V3 receive ring (gopacket's afpacket,
// pure Go, no cgo). The software switch's ports (softswitch/afport) and the live
// probes (probes/live) are built on it.
//
// It receives only frames that arrive on the interface: frames the host
// itself transmits there (PACKET_OUTGOING, including the socket's own
// writes) are dropped by a BPF filter in the kernel, so a switch never
// sees its own transmissions.
//
// Frames are read from a TPACKET_V2 ring by default (per-frame wake-up;
// see DefaultVersion for why not V3) or a TPACKET_V3 ring on request. The
// receive timestamp passed to the handler is the kernel's, taken when the
// frame arrived, not when it was read.
//
// A socket outlives its interface: when the interface goes down, or is
// deleted and created again under the same name, Run notices (the kernel
// flags the socket with ENETDOWN, poll reports POLLERR), drops the dead
// socket and binds a new one to whatever interface then has the name, with
// back-off while there is none or it is down (see rebind.go).
package afsock

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gopacket/gopacket/afpacket"
	"github.com/vishvananda/netns"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// Options configures a Socket.
type Options struct {
	// IfName is the interface, in the calling thread's network namespace.
	IfName string
	// BlockTimeout is TPACKET_V3's block retire timeout: the longest a
	// received frame waits in a partly filled block. Default 1 ms, the
	// minimum (millisecond granularity).
	BlockTimeout time.Duration
	// BlockSize and NumBlocks size the ring: default 256 KiB × 32 = 8 MiB.
	BlockSize, NumBlocks int
	// Promiscuous receives frames for any MAC (a switch port does).
	Promiscuous bool
	// Version is the TPACKET ring version, 2 or 3; default DefaultVersion.
	Version int
	// Logger receives the socket's outages (interface down or gone) and
	// recoveries, rate-limited; default discard.
	Logger *slog.Logger
	// OnBound, if set, is called from Run's goroutine when the socket
	// loses its interface (false) and when it has bound again (true),
	// after Bound reports the new value. It must not block for long or
	// call Close.
	OnBound func(bound bool)
}

func (o Options) withDefaults() Options {
	if o.BlockTimeout <= 0 {
		o.BlockTimeout = time.Millisecond
	}
	if o.BlockSize <= 0 {
		o.BlockSize = 256 << 10
	}
	if o.NumBlocks <= 0 {
		o.NumBlocks = 32
	}
	if o.Version == 0 {
		o.Version = DefaultVersion
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// DefaultVersion is the TPACKET version used when Options leave it 0.
//
// It is 2, not 3: TPACKET_V3 hands frames to user space a block at a
// time, when the block fills or its retire timer fires (1 ms at least), so
// on a quiet link every frame waits up to the timeout. Measured with ping
// between two testbed namespaces through the software switch (two ports,
// so two waits per round trip), 30 pings: 0.15 ms average with V2, which
// wakes the reader per frame, against 1.4–1.8 ms with V3 (1 ms retire
// timeout) on an idle machine, and 0.17 ms against 13.7 ms on a heavily
// loaded one (load average 20 on 2 cores). A switch that must add exactly
// the modelled delay, and probes that measure 50 µs hits, need V2; V3
// remains available for capture-heavy, latency-tolerant use.
const DefaultVersion = 2

// pollInterval bounds how long Run takes to notice Close.
const pollInterval = 100 * time.Millisecond

// Socket is an open AF_PACKET socket on one interface, kept bound to the
// interface of that name across link down/up and re-creation.
type Socket struct {
	opts   Options
	ifName string
	// ns is the namespace Open ran in: a rebind must resolve the name and
	// create its socket there, whatever thread Run happens to be on.
	ns netns.NsHandle

	// mu: Run replaces tp holding it exclusively (nil while the interface
	// is down or missing); Write and Stats use tp holding it shared, so no
	// write reaches a closed (and possibly reused) file descriptor. Only
	// Run's goroutine (and Close, after Run returned) changes tp.
	mu        sync.RWMutex
	tp        *afpacket.TPacket
	closed    bool
	dropsBase uint64 // kernel drops of sockets already replaced

	ifIndex atomic.Int64
	hwaddr  atomic.Pointer[net.HardwareAddr]

	stop    chan struct{}
	wake    chan struct{} // capacity 1: Wake never blocks
	running sync.WaitGroup
	outage  outageLog // Run's goroutine only

	rxFrames, txFrames, txErrors atomic.Uint64
	rebinds, rebindAttempts      atomic.Uint64
}

// Open opens a socket on o.IfName in the calling thread's network
// namespace. The socket stays in that namespace for its life, so a caller
// may open it inside netns (testbed.Do) and use it from any goroutine;
// rebinds after the interface is re-created happen in that namespace too.
// The interface must exist; it may be down (Run then waits for it).
func Open(o Options) (*Socket, error) {
	o = o.withDefaults()
	if o.Version != 2 && o.Version != 3 {
		return nil, fmt.Errorf("afsock %s: TPACKET version %d: want 2 or 3", o.IfName, o.Version)
	}
	b, err := bind(o, false)
	if err != nil {
		return nil, err
	}
	ns, err := netns.Get()
	if err != nil {
		// Without /proc the namespace cannot be pinned; rebinds then run
		// in whatever namespace Run's thread is in (the process's own,
		// unless the caller moved threads).
		o.Logger.Warn("afsock: cannot pin network namespace for rebinds", "iface", o.IfName, "err", err)
		ns = netns.None()
	}
	s := &Socket{
		opts:   o,
		ifName: o.IfName,
		ns:     ns,
		stop:   make(chan struct{}),
		wake:   make(chan struct{}, 1),
		outage: outageLog{log: o.Logger, iface: o.IfName},
	}
	s.install(b)
	return s, nil
}

// bound is a socket bound to one incarnation of the interface.
type bound struct {
	tp     *afpacket.TPacket
	index  int
	hwaddr net.HardwareAddr
}

// errLinkDown: binding now would only give a socket the kernel has
// already flagged with ENETDOWN.
var errLinkDown = errors.New("interface is down")

// bind creates a socket on the interface now called o.IfName, in the
// calling thread's namespace. With requireUp it refuses a down interface.
func bind(o Options, requireUp bool) (bound, error) {
	ifi, err := net.InterfaceByName(o.IfName)
	if err != nil {
		return bound{}, fmt.Errorf("afsock %s: %w", o.IfName, err)
	}
	if requireUp && ifi.Flags&net.FlagUp == 0 {
		return bound{}, fmt.Errorf("afsock %s: %w", o.IfName, errLinkDown)
	}
	version := afpacket.TPacketVersion2
	if o.Version == 3 {
		version = afpacket.TPacketVersion3
	}
	tp, err := afpacket.NewTPacket(
		afpacket.OptInterface(o.IfName),
		version,
		afpacket.OptFrameSize(afpacket.DefaultFrameSize),
		afpacket.OptBlockSize(o.BlockSize),
		afpacket.OptNumBlocks(o.NumBlocks),
		afpacket.OptBlockTimeout(o.BlockTimeout),
		afpacket.OptPollTimeout(pollInterval),
	)
	if err != nil {
		return bound{}, fmt.Errorf("afsock %s: open TPACKET_V%d socket: %w", o.IfName, o.Version, err)
	}
	if err := tp.SetBPF(dropOutgoing()); err != nil {
		tp.Close()
		return bound{}, fmt.Errorf("afsock %s: attach filter: %w", o.IfName, err)
	}
	if o.Promiscuous {
		if err := tp.SetPromiscuous(true); err != nil {
			tp.Close()
			return bound{}, fmt.Errorf("afsock %s: promiscuous: %w", o.IfName, err)
		}
	}
	// NewTPacket looks the name up again to bind: if the interface was
	// replaced in between, the socket is bound to another index than ifi
	// and Run would discard every frame as foreign.
	if again, err := net.InterfaceByName(o.IfName); err != nil || again.Index != ifi.Index {
		tp.Close()
		return bound{}, fmt.Errorf("afsock %s: interface replaced while binding", o.IfName)
	}
	return bound{tp: tp, index: ifi.Index, hwaddr: ifi.HardwareAddr}, nil
}

// install makes b the socket's current binding (Open, or Run holding mu).
func (s *Socket) install(b bound) {
	s.tp = b.tp
	s.ifIndex.Store(int64(b.index))
	hw := append(net.HardwareAddr(nil), b.hwaddr...)
	s.hwaddr.Store(&hw)
}

// dropOutgoing is a classic BPF program accepting every frame except
// those of type PACKET_OUTGOING (skb->pkt_type, the "type" extension).
func dropOutgoing() []bpf.RawInstruction {
	prog, err := bpf.Assemble([]bpf.Instruction{
		bpf.LoadExtension{Num: bpf.ExtType},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.PACKET_OUTGOING, SkipTrue: 1},
		bpf.RetConstant{Val: 0x40000},
		bpf.RetConstant{Val: 0},
	})
	if err != nil {
		panic(fmt.Sprintf("afsock: assemble filter: %v", err)) // constant program
	}
	return prog
}

// Name is the interface name.
func (s *Socket) Name() string { return s.ifName }

// Index is the index of the interface the socket is (or was last) bound
// to, in the socket's namespace; it changes when the interface is
// re-created.
func (s *Socket) Index() int { return int(s.ifIndex.Load()) }

// HWAddr is the MAC address of the interface the socket is (or was last)
// bound to.
func (s *Socket) HWAddr() net.HardwareAddr {
	return append(net.HardwareAddr(nil), *s.hwaddr.Load()...)
}

// Bound reports whether the socket is bound to a live interface: false
// from the moment Run sees the interface go down or away until it has
// bound again.
func (s *Socket) Bound() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.tp != nil
}

// Wake makes a Run that is waiting for the interface to come back try
// now rather than at the end of its back-off. A caller that learns from
// netlink that the interface is up calls it; it never blocks and is
// harmless at any other time.
func (s *Socket) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Handler receives one frame: frame is the handler's to keep (a copy of
// the ring's bytes); at is the kernel's receive timestamp.
type Handler func(frame []byte, at time.Time)

// ErrClosed is returned by Run and Write after Close.
var ErrClosed = errors.New("afsock: socket closed")

// ErrUnbound is returned by Write while the interface is down or missing
// and the socket waits to bind again.
var ErrUnbound = errors.New("afsock: interface down or missing")

// Run reads frames and passes each to h until Close, and returns nil
// then. A read error (the interface went down or was deleted) does not
// stop it: it rebinds, with back-off, to the interface of that name once
// that is up. Only one Run may be active.
func (s *Socket) Run(h Handler) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	s.running.Add(1)
	s.mu.Unlock()
	defer s.running.Done()
	for {
		select {
		case <-s.stop:
			return nil
		default:
		}
		tp := s.tp // only this goroutine changes it
		if tp == nil {
			if !s.rebind() {
				return nil
			}
			continue
		}
		data, ci, err := tp.ZeroCopyReadPacketData()
		switch {
		case err == nil:
		case errors.Is(err, afpacket.ErrTimeout), errors.Is(err, unix.EINTR):
			continue
		default:
			select {
			case <-s.stop:
				return nil
			default:
			}
			// ErrPoll (POLLERR) is the kernel's ENETDOWN: the interface
			// went down or was unregistered. The error stays pending on
			// the socket, so every later poll fails at once; and a socket
			// whose interface was deleted is bound to nothing. Either way
			// the socket is replaced, which also starts from a fresh ring
			// with no frame or block status left over from before.
			s.unbind(err)
			continue
		}
		// A socket receives every interface's frames between socket()
		// and bind(); keep only ours.
		if ci.InterfaceIndex != 0 && ci.InterfaceIndex != s.Index() {
			continue
		}
		s.rxFrames.Add(1)
		h(append([]byte(nil), data...), ci.Timestamp)
	}
}

// unbind closes the current socket after a read error (Run only).
func (s *Socket) unbind(cause error) {
	s.mu.Lock()
	tp := s.tp
	s.tp = nil
	s.dropsBase += kernelDrops(tp, s.opts.Version)
	s.mu.Unlock()
	tp.Close()
	if s.opts.OnBound != nil {
		s.opts.OnBound(false)
	}
	s.outage.begin(time.Now(), fmt.Errorf("afsock %s: read: %w", s.ifName, explainReadErr(cause)))
}

// explainReadErr keeps the poll error readable: gopacket's ErrPoll says only
// "packet poll failed"; name what it means.
func explainReadErr(err error) error {
	if errors.Is(err, afpacket.ErrPoll) {
		return fmt.Errorf("%w (POLLERR: interface down or deleted)", err)
	}
	return err
}

// Write transmits one complete Ethernet frame (checksums as given).
func (s *Socket) Write(frame []byte) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	if s.tp == nil {
		s.txErrors.Add(1)
		return fmt.Errorf("afsock %s: write %d bytes: %w", s.ifName, len(frame), ErrUnbound)
	}
	if err := s.tp.WritePacketData(frame); err != nil {
		s.txErrors.Add(1)
		return fmt.Errorf("afsock %s: write %d bytes: %w", s.ifName, len(frame), err)
	}
	s.txFrames.Add(1)
	return nil
}

// Stats are the socket's counters, over all its bindings. KernelDrops
// counts frames the kernel dropped because the ring was full. Rebinds
// counts recoveries after the interface went down or was re-created;
// RebindAttempts counts tries, failed ones included (while the interface
// is down or missing they are spaced by the back-off).
type Stats struct {
	RxFrames, TxFrames, TxErrors uint64
	KernelDrops                  uint64
	Rebinds, RebindAttempts      uint64
}

// Stats returns the counters so far.
func (s *Socket) Stats() Stats {
	st := Stats{
		RxFrames: s.rxFrames.Load(), TxFrames: s.txFrames.Load(), TxErrors: s.txErrors.Load(),
		Rebinds: s.rebinds.Load(), RebindAttempts: s.rebindAttempts.Load(),
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	st.KernelDrops = s.dropsBase
	if s.tp != nil {
		st.KernelDrops += kernelDrops(s.tp, s.opts.Version)
	}
	return st
}

// kernelDrops is tp's running drop count. gopacket returns TPACKET_V3's
// counters in the second value and V2's in the first.
func kernelDrops(tp *afpacket.TPacket, version int) uint64 {
	v2, v3, err := tp.SocketStats()
	if err != nil {
		return 0
	}
	if version == 3 {
		return uint64(v3.Drops())
	}
	return uint64(v2.Drops())
}

// Close stops Run (within pollInterval), then closes the socket. Later
// writes return ErrClosed.
func (s *Socket) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.stop)
	s.mu.Unlock()
	// The reader holds the ring; unmapping it under a running read would
	// crash, so wait for Run to return first.
	s.running.Wait()
	s.mu.Lock()
	tp := s.tp
	s.tp = nil
	if tp != nil {
		s.dropsBase += kernelDrops(tp, s.opts.Version)
	}
	s.mu.Unlock()
	if tp != nil {
		tp.Close()
	}
	if s.ns.IsOpen() {
		_ = s.ns.Close()
	}
	return nil
}
