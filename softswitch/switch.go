package softswitch

import (
	"cmp"
	"context"
	"fmt"
	"github.com/pseudocong/pseudocong/internal/outbox"
	"github.com/pseudocong/pseudocong/internal/ring"
	"log/slog"
	"slices"
	"sync"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/softswitch/flowtable"
	"github.com/pseudocong/pseudocong/tcam"
)

// Switch is the sans-I/O OpenFlow 1.0 switch core. Inputs are packets
// (Receive), OpenFlow messages (HandleMessage) and timers from its clock;
// outputs leave through Port.Transmit, Channel.Send and the three seams
// (MissHandler, Installer, Forwarder). All state is guarded by one mutex so
// that the live backend may call in from many goroutines; on a clock.Sim
// everything runs inside the scheduler loop and is deterministic.
type Switch struct {
	clk clock.Clock
	cfg Config
	log *slog.Logger
	met *Metrics

	mu     sync.Mutex
	outbox outbox.Outbox // effects run outside mu, in order

	ports    map[uint16]*portState
	channels []Channel // attached, in attach order
	table    *flowtable.Table
	emerg    *flowtable.Table // emergency entries: stored and reported, not used for forwarding
	buffers  *bufferStore
	learn    *learningTable

	configFlags uint16
	missSendLen uint16

	peerErrLog openflow.LogLimiter // "error from peer" lines

	expiryTimer clock.Timer
	expiryAt    int64 // UnixNano of the armed timer
	closed      bool

	miss MissHandler
	inst Installer
	fwd  Forwarder

	// The data path's two per-packet effects wait here, in order, and the
	// outbox runs one preallocated func per packet (forwardOne,
	// transmitOne) that pops its head: a closure per packet would put the
	// Hit and the frame on the heap at every hit (see hotpath.go).
	pendingHits ring.Buffer[pendingHit]
	pendingTx   ring.Buffer[pendingTx]
	forwardOne  func()
	transmitOne func()
}

// New returns a switch with no ports, no channels and the ideal seams.
func New(clk clock.Clock, cfg Config) *Switch {
	cfg = cfg.withDefaults()
	s := &Switch{
		clk:         clk,
		cfg:         cfg,
		log:         cfg.Logger.With("dpid", fmt.Sprintf("%016x", cfg.DatapathID)),
		met:         cfg.Metrics,
		ports:       make(map[uint16]*portState),
		table:       flowtable.New(flowtable.Config{Capacity: cfg.TableCapacity, CacheSlots: cfg.ClassifierCache, TieBreak: cfg.TieBreak}),
		emerg:       flowtable.New(flowtable.Config{Capacity: cfg.TableCapacity, TieBreak: cfg.TieBreak}),
		buffers:     newBufferStore(max(cfg.Buffers, 0), cfg.BufferLifetime),
		learn:       newLearningTable(cfg.LearningTable, cfg.LearningAge),
		missSendLen: openflow.DefaultMissSendLen,
	}
	s.miss = IdealMissHandler{s}
	s.inst = IdealInstaller{s}
	s.fwd = IdealForwarder{s}
	s.forwardOne, s.transmitOne = s.runPendingHit, s.runPendingTx
	return s
}

// Clock is the switch's clock, for seams that schedule work on it.
func (s *Switch) Clock() clock.Clock { return s.clk }

// TieBreak is the flow table's rule for overlapping entries of equal
// priority (Config.TieBreak).
func (s *Switch) TieBreak() tcam.TieBreak { return s.cfg.TieBreak }

// DatapathID is the configured datapath id.
func (s *Switch) DatapathID() uint64 { return s.cfg.DatapathID }

// SetMissHandler replaces seam (a); nil restores the ideal handler.
func (s *Switch) SetMissHandler(h MissHandler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h == nil {
		h = IdealMissHandler{s}
	}
	s.miss = h
}

// SetInstaller replaces seam (b); nil restores the ideal installer.
func (s *Switch) SetInstaller(i Installer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i == nil {
		i = IdealInstaller{s}
	}
	s.inst = i
}

// SetForwarder replaces seam (c); nil restores the ideal forwarder.
func (s *Switch) SetForwarder(f Forwarder) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f == nil {
		f = IdealForwarder{s}
	}
	s.fwd = f
}

// SetTableListener installs an observer of flow-table changes (the later
// TCAM placement layer). It is called with the switch lock held and must
// not call back into the switch.
func (s *Switch) SetTableListener(l flowtable.Listener) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.table.SetListener(l)
}

// AddPort adds a port and announces it (PORT_STATUS ADD) to controllers.
func (s *Switch) AddPort(p Port) error {
	if err := validPortNo(p.No()); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.unlockAndDrain()
	if _, dup := s.ports[p.No()]; dup {
		return fmt.Errorf("softswitch: port %d already exists", p.No())
	}
	ps := &portState{port: p, stats: openflow.PortStats{PortNo: p.No()}}
	ps.rxC, ps.txC = s.met.portCounters(p.No())
	s.ports[p.No()] = ps
	s.portStatusLocked(openflow.PortReasonAdd, ps)
	return nil
}

// RemovePort removes a port and announces it (PORT_STATUS DELETE).
func (s *Switch) RemovePort(no uint16) error {
	s.mu.Lock()
	defer s.unlockAndDrain()
	ps, ok := s.ports[no]
	if !ok {
		return fmt.Errorf("softswitch: no port %d", no)
	}
	delete(s.ports, no)
	s.learn.forgetPort(no)
	s.portStatusLocked(openflow.PortReasonDelete, ps)
	return nil
}

// SetLinkDown changes a port's link state (PORT_STATUS MODIFY on change).
func (s *Switch) SetLinkDown(no uint16, down bool) error {
	s.mu.Lock()
	defer s.unlockAndDrain()
	ps, ok := s.ports[no]
	if !ok {
		return fmt.Errorf("softswitch: no port %d", no)
	}
	old := ps.state
	if down {
		ps.state |= openflow.PortStateLinkDown
	} else {
		ps.state &^= openflow.PortStateLinkDown
	}
	if ps.state != old {
		s.portStatusLocked(openflow.PortReasonModify, ps)
	}
	return nil
}

// sortedPortsLocked returns the ports in port-number order.
func (s *Switch) sortedPortsLocked() []*portState {
	out := make([]*portState, 0, len(s.ports))
	for _, p := range s.ports {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b *portState) int { return cmp.Compare(a.port.No(), b.port.No()) })
	return out
}

// Attach registers an OpenFlow connection after its handshake. Attaching
// the first controller leaves fail mode.
func (s *Switch) Attach(ch Channel) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !slices.Contains(s.channels, ch) {
		s.channels = append(s.channels, ch)
	}
	s.logChannel("channel attached", ch)
}

// Detach forgets a connection (closed or lost).
func (s *Switch) Detach(ch Channel) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.channels = slices.DeleteFunc(s.channels, func(c Channel) bool { return c == ch })
	s.logChannel("channel detached", ch)
}

// logChannel logs controller changes at info level; management clients
// (one connection per ovs-ofctl command) only at debug level.
func (s *Switch) logChannel(msg string, ch Channel) {
	level := slog.LevelDebug
	if ch.Role() == RoleController {
		level = slog.LevelInfo
	}
	s.log.Log(context.Background(), level, msg, "role", ch.Role(), "controllers", s.controllersLocked())
}

// ControllerConnected reports whether a controller channel is attached.
func (s *Switch) ControllerConnected() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.controllersLocked() > 0
}

func (s *Switch) controllersLocked() int {
	n := 0
	for _, c := range s.channels {
		if c.Role() == RoleController {
			n++
		}
	}
	return n
}

// sendLocked queues m for ch.
func (s *Switch) sendLocked(ch Channel, m openflow.Message) {
	s.emitLocked(func() {
		if err := ch.Send(m); err != nil {
			s.met.sendFailed()
			s.log.Debug("send failed", "type", m.MsgType(), "role", ch.Role(), "err", err)
		}
	})
}

// sendAsyncLocked queues m for every controller channel; it reports
// whether there was one.
func (s *Switch) sendAsyncLocked(m openflow.Message) bool {
	sent := false
	for _, c := range s.channels {
		if c.Role() == RoleController {
			s.sendLocked(c, m)
			sent = true
		}
	}
	return sent
}

// portStatusLocked announces a port change to controllers.
func (s *Switch) portStatusLocked(reason uint8, ps *portState) {
	s.sendAsyncLocked(&openflow.PortStatus{
		Header: openflow.Header{Version: openflow.Version, Type: openflow.TypePortStatus},
		Reason: reason,
		Desc:   ps.phyPort(),
	})
}

// Close stops the switch's timers. Later inputs are still processed (the
// shells stop feeding it first).
func (s *Switch) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.expiryTimer != nil {
		s.expiryTimer.Stop()
		s.expiryTimer = nil
	}
}
