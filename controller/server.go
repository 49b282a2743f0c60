package controller

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/pseudocong/pseudocong/openflow"
)

// DefaultEchoInterval is the keepalive interval, Open vSwitch's inactivity
// probe.
const DefaultEchoInterval = 5 * time.Second

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
	// HandshakeTimeout bounds HELLO + FEATURES (default 10 s).
	HandshakeTimeout time.Duration
	// WriteTimeout drops a switch that does not read what we send for this
	// long (default 10 s).
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
		cfg.HandshakeTimeout = 10 * time.Second
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
	cfg ServerConfig
	log *slog.Logger

	mu    sync.Mutex
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// NewServer returns a server for cfg.Core.
func NewServer(cfg ServerConfig) *Server {
	if cfg.Core == nil {
		panic("controller: ServerConfig.Core is nil")
	}
	cfg = cfg.withDefaults()
	return &Server{cfg: cfg, log: cfg.Logger, conns: make(map[net.Conn]struct{})}
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
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			if err := s.ServeConn(ctx, nc); err != nil {
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
// disconnect returns nil.
func (s *Server) ServeConn(ctx context.Context, nc net.Conn) error {
	s.mu.Lock()
	s.conns[nc] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.conns, nc)
		s.mu.Unlock()
		_ = nc.Close()
	}()
	stop := context.AfterFunc(ctx, func() { _ = nc.Close() })
	defer stop()

	c := newSwitchConn(s, nc)
	defer c.ep.Close() // tells the core and the app, if connected
	if err := c.handshake(); err != nil {
		return fmt.Errorf("handshake with %s: %w", nc.RemoteAddr(), err)
	}
	c.log = c.log.With("dpid", dpidString(c.ep.DPID()))

	done := make(chan struct{})
	defer close(done)
	if s.cfg.EchoInterval > 0 {
		go c.keepalive(done)
	}
	err := c.serve()
	if errors.Is(err, io.EOF) || (ctx.Err() != nil && errors.Is(err, net.ErrClosed)) {
		return nil
	}
	return err
}
