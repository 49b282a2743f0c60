package controller

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"sync"
	"time"

	"github.com/pseudocong/pseudocong/openflow"
)

// DefaultEchoInterval is the keepalive interval, Open vSwitch's inactivity
// probe.
const DefaultEchoInterval = 5 * time.Second

// Admission defaults, sized for a controller driving hundreds of switches:
// a connection that has not completed the handshake costs a goroutine and a
// few kilobytes, a connected one adds its read and write buffers (80 KB,
// most of it untouched).
const (
	// DefaultMaxConns leaves room for several hundred switches and a
	// reconnect storm on top.
	DefaultMaxConns = 1024
	// DefaultMaxHandshakesPerPeer is larger than the switches one host
	// (Open vSwitch with many bridges, the load generator) starts at once,
	// and bounds what one source address can hold half-open.
	DefaultMaxHandshakesPerPeer = 128
	// DefaultHandshakeTimeout bounds HELLO + FEATURES: milliseconds on a
	// LAN, a TLS handshake included.
	DefaultHandshakeTimeout = 10 * time.Second
)

// ServerConfig configures the TCP shell.
type ServerConfig struct {
	// Core receives the switches. Required.
	Core *Core
	// MissSendLen is sent in SET_CONFIG: how many bytes of a missed packet
	// a buffering switch includes in its PACKET_IN (default 128, OpenFlow's
	// OFP_DEFAULT_MISS_SEND_LEN; an unbuffered PACKET_IN carries the whole
	// frame anyway).
	MissSendLen uint16
	// EchoInterval: after this much silence the switch gets an
	// ECHO_REQUEST, and after as much again without any message it is
	// disconnected (default 5 s; negative disables).
	EchoInterval time.Duration
	// HandshakeTimeout bounds HELLO + FEATURES, the TLS handshake included
	// (default 10 s). A connection that has not completed them in time is
	// closed and counted in handshake_timeouts_total.
	HandshakeTimeout time.Duration
	// MaxConns caps the connections open at once, handshaking or connected
	// (default DefaultMaxConns; negative: no cap). A connection beyond it is
	// closed on accept and counted in connections_refused_total{reason=
	// "max_conns"}: the memory a flood of connections can take is bounded.
	MaxConns int
	// MaxHandshakesPerPeer caps the connections from one source IP that
	// have not completed the handshake (default DefaultMaxHandshakesPerPeer;
	// negative: no cap); beyond it, connections_refused_total{reason=
	// "peer_handshakes"}. Only handshaking connections count: one host may
	// run hundreds of bridges, but one peer holding many half-open
	// connections must not fill MaxConns and lock every other switch out.
	// Unix-socket peers have no address and are not capped per peer.
	MaxHandshakesPerPeer int
	// WriteTimeout drops a switch that does not read what we send for this
	// long (0.9 to 1 times it: the socket deadline is moved only when less
	// than 90 % is left; default 10 s).
	WriteTimeout time.Duration
	// MaxMessageLen: longer messages are skipped and answered with
	// BAD_REQUEST/BAD_LEN (default and maximum 65535).
	MaxMessageLen int
	// Logger defaults to discarding.
	Logger *slog.Logger
}

func (cfg ServerConfig) withDefaults() ServerConfig {
	if cfg.MissSendLen == 0 {
		cfg.MissSendLen = openflow.DefaultMissSendLen
	}
	if cfg.EchoInterval == 0 {
		cfg.EchoInterval = DefaultEchoInterval
	}
	if cfg.HandshakeTimeout <= 0 {
		cfg.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if cfg.MaxConns == 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	if cfg.MaxHandshakesPerPeer == 0 {
		cfg.MaxHandshakesPerPeer = DefaultMaxHandshakesPerPeer
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = 10 * time.Second
	}
	if cfg.MaxMessageLen <= 0 || cfg.MaxMessageLen > openflow.MaxMessageLen {
		cfg.MaxMessageLen = openflow.MaxMessageLen
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return cfg
}

// Server accepts switches over TCP (or TLS, or a unix socket: any
// net.Listener) and runs each through the handshake and into the Core.
//
// Each connection is served by one goroutine that reads, decodes, runs the
// app and encodes the replies into a per-connection buffer, which is written
// with one system call when no further whole message is already buffered:
// under load, one read of many PACKET_INs becomes one write of many
// FLOW_MODs.
type Server struct {
	cfg     ServerConfig
	log     *slog.Logger
	metrics *Metrics

	mu      sync.Mutex
	conns   map[net.Conn]struct{}
	pending map[netip.Addr]int // handshaking connections per source IP
	refusal refusalLog
	wg      sync.WaitGroup
}

// refusalLog rate-limits the warning about refused connections: a flood
// is counted in the metrics, and logged once per refusalLogEvery.
type refusalLog struct {
	last       time.Time
	suppressed int
}

const refusalLogEvery = 10 * time.Second

// NewServer returns a server for cfg.Core.
func NewServer(cfg ServerConfig) *Server {
	if cfg.Core == nil {
		panic("controller: ServerConfig.Core is nil")
	}
	cfg = cfg.withDefaults()
	return &Server{cfg: cfg, log: cfg.Logger, metrics: cfg.Core.Metrics(),
		conns: make(map[net.Conn]struct{}), pending: make(map[netip.Addr]int)}
}

// admission is an admitted connection's place in the server's counts.
type admission struct {
	nc          net.Conn   // nil once released
	peer        netip.Addr // invalid for peers without an IP (unix sockets)
	handshaking bool       // counted as handshaking (and in Server.pending if peer is valid)
}

// admit counts nc in, or refuses it (reason >= 0) when a cap is reached.
// Caps are checked and taken under one lock, so concurrent ServeConn
// calls cannot overshoot them.
func (s *Server) admit(nc net.Conn) (a admission, reason int) {
	a = admission{nc: nc, peer: peerIP(nc.RemoteAddr())}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cfg.MaxConns > 0 && len(s.conns) >= s.cfg.MaxConns {
		return a, refuseMaxConns
	}
	if a.peer.IsValid() && s.cfg.MaxHandshakesPerPeer > 0 && s.pending[a.peer] >= s.cfg.MaxHandshakesPerPeer {
		return a, refusePeerHandshakes
	}
	s.conns[nc] = struct{}{}
	a.handshaking = true
	if a.peer.IsValid() {
		s.pending[a.peer]++
	}
	s.metrics.connOpen(1)
	s.metrics.connHandshaking(1)
	return a, -1
}

// handshakeEnded takes a out of the handshaking counts (once).
func (s *Server) handshakeEnded(a *admission) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.endHandshakeLocked(a)
}

func (s *Server) endHandshakeLocked(a *admission) {
	if !a.handshaking {
		return
	}
	a.handshaking = false
	s.metrics.connHandshaking(-1)
	if a.peer.IsValid() {
		if s.pending[a.peer]--; s.pending[a.peer] <= 0 {
			delete(s.pending, a.peer) // the map holds only current peers
		}
	}
}

// release takes a out of every count when its connection ends.
func (s *Server) release(a *admission) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a.nc == nil {
		return
	}
	s.endHandshakeLocked(a)
	delete(s.conns, a.nc)
	s.metrics.connOpen(-1)
	a.nc = nil
}

// refuse closes a connection that admit turned down, counts it, and logs
// now and then.
func (s *Server) refuse(nc net.Conn, reason int) error {
	_ = nc.Close()
	s.metrics.connRefused(reason)
	err := fmt.Errorf("controller: refused connection from %s: %s", nc.RemoteAddr(), refuseReasonText(reason, s.cfg))
	s.mu.Lock()
	now := time.Now()
	logIt := now.Sub(s.refusal.last) >= refusalLogEvery
	suppressed := s.refusal.suppressed
	if logIt {
		s.refusal.last, s.refusal.suppressed = now, 0
	} else {
		s.refusal.suppressed++
	}
	s.mu.Unlock()
	if logIt {
		s.log.Warn("refusing switch connections", "err", err, "refused_since_last_warning", suppressed,
			"every", refusalLogEvery)
	}
	return err
}

func refuseReasonText(reason int, cfg ServerConfig) string {
	switch reason {
	case refuseMaxConns:
		return fmt.Sprintf("max_conns: %d connections already open", cfg.MaxConns)
	case refusePeerHandshakes:
		return fmt.Sprintf("peer_handshakes: %d connections from that address already in the handshake", cfg.MaxHandshakesPerPeer)
	}
	return refuseReasonLabels[reason]
}

// peerIP is the source IP of a TCP (or TLS over TCP) peer; the zero Addr
// for others.
func peerIP(addr net.Addr) netip.Addr {
	if ta, ok := addr.(*net.TCPAddr); ok {
		return ta.AddrPort().Addr().Unmap()
	}
	return netip.Addr{}
}

// Serve accepts switches from ln until ctx ends, then closes ln and every
// switch connection and waits for them. It returns nil after ctx ends, or
// the listener's error.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	stop := context.AfterFunc(ctx, func() { _ = ln.Close() })
	defer stop()
	defer s.wg.Wait()
	s.log.Info("controller listening", "addr", ln.Addr().String())
	backoff := 5 * time.Millisecond
	for {
		nc, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				s.closeAll()
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				// Out of file descriptors and the like: wait, do not spin.
				s.log.Warn("accept failed; retrying", "err", err, "backoff", backoff)
				time.Sleep(backoff)
				backoff = min(2*backoff, time.Second)
				continue
			}
			s.closeAll()
			return fmt.Errorf("controller: accept on %s: %w", ln.Addr(), err)
		}
		backoff = 5 * time.Millisecond
		// Refuse in the accept loop, before a goroutine exists: a flood
		// costs one accept and one close per connection.
		a, reason := s.admit(nc)
		if reason >= 0 {
			_ = s.refuse(nc, reason)
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			if err := s.serveAdmitted(ctx, &a); err != nil {
				s.log.Info("switch connection ended", "remote", nc.RemoteAddr().String(), "err", err)
			}
		}()
	}
}

func (s *Server) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for nc := range s.conns {
		_ = nc.Close()
	}
}

// ServeConn runs one switch connection to its end: handshake, then
// messages into the core until the switch disconnects, misbehaves beyond
// repair, stops answering echoes, or ctx ends. It closes nc. A clean
// disconnect returns nil. The caps of ServerConfig apply: a connection
// beyond them is closed at once with an error.
func (s *Server) ServeConn(ctx context.Context, nc net.Conn) error {
	a, reason := s.admit(nc)
	if reason >= 0 {
		return s.refuse(nc, reason)
	}
	return s.serveAdmitted(ctx, &a)
}

func (s *Server) serveAdmitted(ctx context.Context, a *admission) error {
	nc := a.nc
	defer func() {
		s.release(a)
		_ = nc.Close()
	}()
	stop := context.AfterFunc(ctx, func() { _ = nc.Close() })
	defer stop()

	c := newSwitchConn(s, nc)
	defer c.ep.Close() // tells the core and the app, if connected
	err := c.handshake()
	s.handshakeEnded(a)
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			s.metrics.handshakeTimedOut()
			return fmt.Errorf("handshake with %s not completed within %v: %w", nc.RemoteAddr(), s.cfg.HandshakeTimeout, err)
		}
		return fmt.Errorf("handshake with %s: %w", nc.RemoteAddr(), err)
	}
	c.log = c.log.With("dpid", dpidString(c.ep.DPID()))

	err = c.serve()
	if errors.Is(err, io.EOF) || (ctx.Err() != nil && errors.Is(err, net.ErrClosed)) {
		return nil
	}
	return err
}
