package softswitch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
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
	// ReplyTimeout bounds how long a reply may wait for room in a
	// connection's write queue before it is dropped. Default 5 s.
	ReplyTimeout time.Duration
	// MaxServiceConns bounds concurrent passive connections; more are
	// closed at once. Default 64.
	MaxServiceConns int
	// Conn tunes every connection (keepalive, queues, limits).
	Conn openflow.ConnConfig
	// Logger: default discard.
	Logger *slog.Logger
}

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
	if c.ReplyTimeout <= 0 {
		c.ReplyTimeout = 5 * time.Second
	}
	if c.MaxServiceConns <= 0 {
		c.MaxServiceConns = 64
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

	connects   atomic.Uint64 // controller handshakes completed
	connected  atomic.Bool
	serviceSem chan struct{}
}

// NewSession opens the passive listeners at once, so that their addresses
// (port 0 = any free port) are known before Run.
func NewSession(sw *Switch, cfg SessionConfig) (*Session, error) {
	cfg = cfg.withDefaults()
	s := &Session{sw: sw, cfg: cfg, log: cfg.Logger, serviceSem: make(chan struct{}, cfg.MaxServiceConns)}
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
		select {
		case s.serviceSem <- struct{}{}:
		default:
			s.log.Warn("too many management connections; closing", "peer", nc.RemoteAddr())
			_ = nc.Close()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-s.serviceSem }()
			if _, err := s.serve(ctx, nc, RoleService); err != nil {
				s.log.Debug("management connection ended", "peer", nc.RemoteAddr(), "err", err)
			}
		}()
	}
}

// serve runs one connection: handshake, attach, feed every message to the
// core in order, detach. up reports whether the handshake succeeded.
func (s *Session) serve(ctx context.Context, nc net.Conn, role Role) (up bool, err error) {
	c := openflow.NewConn(nc, s.cfg.Conn)
	stop := context.AfterFunc(ctx, func() { _ = c.Close() })
	defer stop()
	defer c.Close()
	if err := c.Handshake(ctx); err != nil {
		return false, fmt.Errorf("handshake with %v: %w", nc.RemoteAddr(), err)
	}
	ch := &connChannel{c: c, role: role, replyTimeout: s.cfg.ReplyTimeout}
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
			return true, err
		}
		s.sw.HandleMessage(ch, m)
	}
}

// connChannel adapts an openflow.Conn to Channel. Asynchronous messages
// (PACKET_IN, FLOW_REMOVED, PORT_STATUS) are dropped when the write queue
// is full, as a switch's rate limiter would; replies wait for room up to
// the reply timeout, so ovs-ofctl gets every part of a large stats reply.
type connChannel struct {
	c            *openflow.Conn
	role         Role
	replyTimeout time.Duration
}

func (c *connChannel) Role() Role { return c.role }

func (c *connChannel) Send(m openflow.Message) error {
	switch m.MsgType() {
	case openflow.TypePacketIn, openflow.TypeFlowRemoved, openflow.TypePortStatus:
		return c.c.SendNonBlocking(m)
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.replyTimeout)
	defer cancel()
	return c.c.SendContext(ctx, m)
}
