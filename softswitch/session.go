package softswitch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pseudocong/pseudocong/openflow"
)

// SessionConfig configures the switch's OpenFlow connections.
type SessionConfig struct {
	// Controller is the active target to dial (tcp:HOST:PORT, ssl:...,
	// unix:PATH); empty means no controller (the switch stays in fail
	// mode).
	Controller string
	// Listen are passive targets (ptcp:PORT[:HOST], pssl:..., punix:PATH)
	// for management clients such as ovs-ofctl. Their connections get
	// replies only (RoleService).
	Listen []string
	// TLS holds the key, certificate and CA files for ssl:/pssl: targets.
	TLS *openflow.TLSConfig
	// MinBackoff and MaxBackoff bound the redial delay, which doubles after
	// every failed attempt. Defaults 100 ms and 8 s.
	MinBackoff, MaxBackoff time.Duration
	// DialTimeout bounds one dial including TLS. Default 5 s.
	DialTimeout time.Duration
	// MaxServiceConns bounds concurrent passive connections; more are
	// closed at once. Default 64.
	MaxServiceConns int
	// MaxServiceConnsPerPeer bounds the passive connections from one IP
	// address, so that one host cannot take every slot; more are closed at
	// once. Unix-socket clients are bounded by MaxServiceConns only.
	// Default 16.
	MaxServiceConnsPerPeer int
	// ServiceHandshakeTimeout bounds the HELLO exchange (TLS included) of a
	// passive connection, which holds a slot meanwhile; ovs-ofctl needs
	// milliseconds. Default 3 s. The controller connection uses
	// Conn.HandshakeTimeout.
	ServiceHandshakeTimeout time.Duration
	// ServiceIdleTimeout closes a passive connection on which no whole
	// message arrived for that long (bytes of an unfinished message do not
	// count). A quiet client such as ovs-ofctl monitor stays up by
	// answering the switch's echo requests, sent after Conn.EchoInterval
	// of silence. Default 30 s; negative disables.
	ServiceIdleTimeout time.Duration
	// Conn tunes every connection (keepalive, queues, limits). Its
	// ReplyBacklog defaults to 1 MiB here (negative turns it off): a peer
	// with that much of its replies unread gets no more of its requests
	// handled until it reads, and costs no other connection anything.
	Conn openflow.ConnConfig
	// Logger: default discard.
	Logger *slog.Logger
}

// SessionConfig defaults.
const (
	DefaultMaxServiceConns         = 64
	DefaultMaxServiceConnsPerPeer  = 16
	DefaultServiceHandshakeTimeout = 3 * time.Second
	DefaultServiceIdleTimeout      = 30 * time.Second
	// DefaultReplyBacklog is Conn.ReplyBacklog's default here.
	DefaultReplyBacklog = 1 << 20
)

func (c SessionConfig) withDefaults() SessionConfig {
	if c.MinBackoff <= 0 {
		c.MinBackoff = 100 * time.Millisecond
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = 8 * time.Second
	}
	if c.MaxBackoff < c.MinBackoff {
		c.MaxBackoff = c.MinBackoff
	}
	if c.DialTimeout <= 0 {
		c.DialTimeout = 5 * time.Second
	}
	if c.MaxServiceConns <= 0 {
		c.MaxServiceConns = DefaultMaxServiceConns
	}
	if c.MaxServiceConnsPerPeer <= 0 {
		c.MaxServiceConnsPerPeer = DefaultMaxServiceConnsPerPeer
	}
	if c.ServiceHandshakeTimeout <= 0 {
		c.ServiceHandshakeTimeout = DefaultServiceHandshakeTimeout
	}
	if c.ServiceIdleTimeout == 0 {
		c.ServiceIdleTimeout = DefaultServiceIdleTimeout
	}
	if c.ServiceIdleTimeout < 0 {
		c.ServiceIdleTimeout = 0
	}
	switch {
	case c.Conn.ReplyBacklog == 0:
		c.Conn.ReplyBacklog = DefaultReplyBacklog
	case c.Conn.ReplyBacklog < 0:
		c.Conn.ReplyBacklog = 0
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Conn.Logger == nil {
		c.Conn.Logger = c.Logger
	}
	return c
}

// Session is the switch's shell: it connects the core to its controller
// (with reconnect) and to management clients on passive listeners.
type Session struct {
	sw        *Switch
	cfg       SessionConfig
	log       *slog.Logger
	listeners []net.Listener

	connects  atomic.Uint64 // controller handshakes completed
	connected atomic.Bool

	// Passive connection slots, by peer IP ("" for unix sockets).
	svcMu     sync.Mutex
	svcTotal  int
	svcByPeer map[string]int
	refuseLog openflow.LogLimiter
}

// NewSession opens the passive listeners at once, so that their addresses
// (port 0 = any free port) are known before Run.
func NewSession(sw *Switch, cfg SessionConfig) (*Session, error) {
	cfg = cfg.withDefaults()
	s := &Session{sw: sw, cfg: cfg, log: cfg.Logger, svcByPeer: make(map[string]int)}
	if cfg.Controller != "" {
		t, err := openflow.ParseTarget(cfg.Controller)
		if err != nil {
			return nil, fmt.Errorf("controller target: %w", err)
		}
		if t.Passive {
			return nil, fmt.Errorf("controller target %q is passive; the switch dials its controller (use tcp:, ssl: or unix:)", cfg.Controller)
		}
	}
	for _, target := range cfg.Listen {
		l, err := openflow.Listen(target, cfg.TLS)
		if err != nil {
			s.closeListeners()
			return nil, fmt.Errorf("listen: %w", err)
		}
		s.listeners = append(s.listeners, l)
	}
	return s, nil
}

// ListenAddrs are the bound addresses of the passive listeners, in the
// order of SessionConfig.Listen.
func (s *Session) ListenAddrs() []net.Addr {
	out := make([]net.Addr, len(s.listeners))
	for i, l := range s.listeners {
		out[i] = l.Addr()
	}
	return out
}

// ControllerConnected reports whether the controller connection is up.
func (s *Session) ControllerConnected() bool { return s.connected.Load() }

// ControllerConnects is the number of controller handshakes completed.
func (s *Session) ControllerConnects() uint64 { return s.connects.Load() }

func (s *Session) closeListeners() {
	for _, l := range s.listeners {
		_ = l.Close()
	}
}

// Run serves until ctx ends, then closes every connection and listener and
// returns nil. Connection errors never end Run: the controller is redialled
// and listeners keep accepting.
func (s *Session) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	for _, l := range s.listeners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.acceptLoop(ctx, l, &wg)
		}()
	}
	if s.cfg.Controller != "" {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.controllerLoop(ctx)
		}()
	}
	<-ctx.Done()
	s.closeListeners()
	wg.Wait()
	return nil
}

// controllerLoop dials the controller and redials with capped exponential
// backoff; a connection that completed its handshake resets the backoff.
func (s *Session) controllerLoop(ctx context.Context) {
	backoff := s.cfg.MinBackoff
	for ctx.Err() == nil {
		dctx, cancel := context.WithTimeout(ctx, s.cfg.DialTimeout)
		nc, err := openflow.Dial(dctx, s.cfg.Controller, s.cfg.TLS)
		cancel()
		if err == nil {
			var up bool
			up, err = s.serve(ctx, nc, RoleController)
			if up {
				backoff = s.cfg.MinBackoff
			}
		}
		if ctx.Err() != nil {
			return
		}
		s.log.Warn("controller connection failed; retrying", "target", s.cfg.Controller, "err", err, "backoff", backoff)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, s.cfg.MaxBackoff)
	}
}

func (s *Session) acceptLoop(ctx context.Context, l net.Listener, wg *sync.WaitGroup) {
	for {
		nc, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			s.log.Warn("accept failed", "addr", l.Addr(), "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		peer := peerKey(nc.RemoteAddr())
		if reason := s.takeServiceSlot(peer); reason != "" {
			s.refused(nc, reason)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer s.releaseServiceSlot(peer)
			if _, err := s.serve(ctx, nc, RoleService); err != nil {
				s.log.Debug("management connection ended", "peer", nc.RemoteAddr(), "err", err)
			}
		}()
	}
}

// Reasons a passive connection is refused (metric label).
const (
	refusedMaxConns = "max_connections"
	refusedPerPeer  = "per_peer_limit"
)

// peerKey is the per-peer limit's key: the peer's IP address; "" (no
// per-peer limit) for unix sockets.
func peerKey(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok {
		if ip, ok := netip.AddrFromSlice(ta.IP); ok {
			return ip.Unmap().String()
		}
	}
	return ""
}

// takeServiceSlot reserves a passive connection slot for peer; it returns
// why not ("" when taken).
func (s *Session) takeServiceSlot(peer string) string {
	s.svcMu.Lock()
	defer s.svcMu.Unlock()
	if s.svcTotal >= s.cfg.MaxServiceConns {
		return refusedMaxConns
	}
	if peer != "" && s.svcByPeer[peer] >= s.cfg.MaxServiceConnsPerPeer {
		return refusedPerPeer
	}
	s.svcTotal++
	if peer != "" {
		s.svcByPeer[peer]++
	}
	s.sw.met.setServiceConns(s.svcTotal)
	return ""
}

func (s *Session) releaseServiceSlot(peer string) {
	s.svcMu.Lock()
	defer s.svcMu.Unlock()
	s.svcTotal--
	if peer != "" {
		if s.svcByPeer[peer]--; s.svcByPeer[peer] <= 0 {
			delete(s.svcByPeer, peer)
		}
	}
	s.sw.met.setServiceConns(s.svcTotal)
}

// refused closes a passive connection that got no slot; the warning is
// limited to one a second, as a connection flood would repeat it.
func (s *Session) refused(nc net.Conn, reason string) {
	_ = nc.Close()
	s.sw.met.serviceRefused(reason)
	s.svcMu.Lock()
	ok, suppressed := s.refuseLog.Allow()
	s.svcMu.Unlock()
	if ok {
		s.log.Warn("management connection refused", "peer", nc.RemoteAddr(), "reason", reason,
			"max_connections", s.cfg.MaxServiceConns, "per_peer", s.cfg.MaxServiceConnsPerPeer, "suppressed", suppressed)
	}
}

// connConfig is the openflow.ConnConfig of a connection in role.
func (s *Session) connConfig(role Role) openflow.ConnConfig {
	cfg := s.cfg.Conn
	if role == RoleService {
		cfg.HandshakeTimeout = s.cfg.ServiceHandshakeTimeout
		cfg.IdleTimeout = s.cfg.ServiceIdleTimeout
	}
	met := s.sw.met
	cfg.OnControlDrop = func(t openflow.Type, err error) { met.channelDropped(role, t, err) }
	return cfg
}

// serve runs one connection: handshake, attach, feed every message to the
// core in order, detach. up reports whether the handshake succeeded.
//
// Before each message the loop waits while the peer has ReplyBacklog
// bytes of replies unread (the connection's reader has stopped reading it
// too): a peer that does not read gets no more of its requests handled,
// and since Channel.Send never waits, nobody else waits for it.
func (s *Session) serve(ctx context.Context, nc net.Conn, role Role) (up bool, err error) {
	c := openflow.NewConn(nc, s.connConfig(role))
	stop := context.AfterFunc(ctx, func() { _ = c.Close() })
	defer stop()
	defer c.Close()
	if err := c.Handshake(ctx); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
			s.sw.met.connTimeout(role, "handshake")
		}
		return false, fmt.Errorf("handshake with %v: %w", nc.RemoteAddr(), err)
	}
	ch := &connChannel{c: c, role: role, met: s.sw.met}
	if role == RoleController {
		s.connects.Add(1)
		s.connected.Store(true)
		defer s.connected.Store(false)
		s.log.Info("controller connected", "target", s.cfg.Controller, "peer", nc.RemoteAddr())
	}
	s.sw.Attach(ch)
	defer s.sw.Detach(ch)
	for {
		m, err := c.ReadMessage()
		if err != nil {
			if errors.Is(err, openflow.ErrIdle) {
				s.sw.met.connTimeout(role, "idle")
			}
			return true, err
		}
		// Returns at once once the connection is closing: what the peer
		// sent before it closed (a FLOW_MOD from ovs-ofctl) still applies.
		_ = c.WaitReplyRoom(ctx)
		s.sw.HandleMessage(ch, m)
	}
}

// connChannel adapts an openflow.Conn to Channel; Send never waits.
// Asynchronous messages (PACKET_IN, FLOW_REMOVED, PORT_STATUS) are dropped
// when the write queue is full, as a switch's rate limiter would. Replies
// are always queued, so ovs-ofctl gets every part of a large stats reply;
// the peer's reply backlog bounds them instead (see Session.serve). Every
// drop is counted by role, type and reason.
type connChannel struct {
	c    *openflow.Conn
	role Role
	met  *Metrics
}

func (c *connChannel) Role() Role { return c.role }

func (c *connChannel) Send(m openflow.Message) error {
	var err error
	switch m.MsgType() {
	case openflow.TypePacketIn, openflow.TypeFlowRemoved, openflow.TypePortStatus:
		err = c.c.SendNonBlocking(m)
	default:
		err = c.c.SendReply(m)
	}
	if err != nil {
		c.met.channelDropped(c.role, m.MsgType(), err)
	}
	return err
}
