package openflow

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Errors returned by Conn.
var (
	// ErrClosed is returned by operations on a connection that was closed
	// locally, and is Err() after Close.
	ErrClosed = errors.New("openflow: connection closed")
	// ErrQueueFull is returned by SendNonBlocking when the write queue is
	// full.
	ErrQueueFull = errors.New("openflow: write queue full")
	// ErrPeerDead is Err() after the peer stayed silent for EchoInterval
	// and then did not answer an ECHO_REQUEST within EchoTimeout.
	ErrPeerDead = errors.New("openflow: peer dead: no answer to echo request")
	// ErrIdle is Err() after no whole message arrived for IdleTimeout.
	ErrIdle = errors.New("openflow: idle timeout: no message from peer")
)

// ConnConfig tunes a Conn. The zero value gives the defaults noted on each
// field.
type ConnConfig struct {
	// Role is the side of the handshake this connection plays (see Role):
	// RoleSwitch (the default) exchanges HELLOs only; RoleController also
	// asks for the features and sends SET_CONFIG.
	Role Role
	// MissSendLen goes into RoleController's SET_CONFIG (default
	// DefaultMissSendLen).
	MissSendLen uint16
	// EchoInterval is the silence after which an ECHO_REQUEST is sent.
	// Default 5 s (Open vSwitch's inactivity probe); negative disables the
	// keepalive.
	EchoInterval time.Duration
	// EchoTimeout is how long the peer may stay silent after that
	// ECHO_REQUEST before it is declared dead. Default EchoInterval.
	EchoTimeout time.Duration
	// HandshakeTimeout bounds Handshake when its context has no earlier
	// deadline. Default 10 s.
	HandshakeTimeout time.Duration
	// WriteTimeout bounds one write to the socket; a peer that does not
	// read for that long is dropped. Default 30 s; negative disables.
	WriteTimeout time.Duration
	// CloseTimeout bounds the flush of the write queue on close. Default 2 s.
	CloseTimeout time.Duration
	// WriteQueue is the most messages queued for writing; Send blocks (or
	// SendNonBlocking fails) beyond it. Default 4096.
	WriteQueue int
	// WriteQueueBytes is the most bytes queued for writing (a single
	// message is always admitted into an empty queue). Default 4 MiB.
	WriteQueueBytes int
	// ReadQueue is the number of received messages buffered for
	// ReadMessage/Serve; when full, the connection stops reading and TCP
	// flow control pushes back on the peer. Default 256 (at most 16 MiB of
	// 64 KiB messages).
	ReadQueue int
	// MaxMessageLen is the largest message accepted; longer ones are
	// skipped and answered with BAD_REQUEST/BAD_LEN. Default and maximum
	// 65535 (the largest length a header can state).
	MaxMessageLen int
	// MaxMultipartBytes bounds the total size of the STATS_REPLY parts
	// collected by RequestMulti. Default 16 MiB.
	MaxMultipartBytes int
	// ReplyBacklog turns on back-pressure for the side that answers
	// requests (a switch). When positive, replies queued with SendReply
	// and the connection's own answers (ECHO_REPLY, ERROR) are never
	// refused for lack of room, and while at least ReplyBacklog bytes of
	// them are queued or being written, the reader reads nothing more from
	// the peer (TCP then pushes back on it) and WaitReplyRoom blocks: a
	// peer that does not read its replies stops being served, and costs
	// no one else anything. The queue then holds at most about
	// ReplyBacklog bytes plus the replies to one request. Zero (the
	// default) leaves it off: the connection's own answers are dropped when
	// the write queue is full, and SendReply behaves as SendNonBlocking.
	ReplyBacklog int
	// IdleTimeout closes the connection (ErrIdle) when no whole message
	// has arrived for that long. The bytes of an unfinished message do not
	// count, so a peer trickling a byte at a time is closed too; time the
	// reader spends held back by us (read queue full, reply backlog) does
	// not count as idle. With the keepalive on, a live but quiet peer
	// answers an echo every EchoInterval, so keep IdleTimeout above
	// EchoInterval+EchoTimeout. Zero (the default) disables it.
	IdleTimeout time.Duration
	// OnControlDrop, if set, is called for every message the connection
	// itself gives up on: an automatic ECHO_REPLY or ERROR answer (only
	// without ReplyBacklog) or a keepalive ECHO_REQUEST that found the
	// write queue full (err wraps ErrQueueFull) or the connection closed.
	// It runs on the connection's goroutines and must not block.
	OnControlDrop func(t Type, err error)
	// Logger receives connection events. Default: discard.
	Logger *slog.Logger
}

func (cfg ConnConfig) withDefaults() ConnConfig {
	def := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	def(&cfg.EchoInterval, 5*time.Second)
	def(&cfg.EchoTimeout, cfg.EchoInterval)
	if cfg.EchoTimeout < 0 {
		cfg.EchoTimeout = 5 * time.Second
	}
	def(&cfg.HandshakeTimeout, 10*time.Second)
	def(&cfg.WriteTimeout, 30*time.Second)
	def(&cfg.CloseTimeout, 2*time.Second)
	defInt := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	defInt(&cfg.WriteQueue, 4096)
	defInt(&cfg.WriteQueueBytes, 4<<20)
	defInt(&cfg.ReadQueue, 256)
	defInt(&cfg.MaxMessageLen, MaxMessageLen)
	if cfg.MaxMessageLen > MaxMessageLen {
		cfg.MaxMessageLen = MaxMessageLen
	}
	defInt(&cfg.MaxMultipartBytes, 16<<20)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return cfg
}

// Conn is one OpenFlow 1.0 connection (plain TCP, TLS or unix socket),
// usable by either side: a controller's switch session or a switch's
// controller session.
//
// After Handshake, these goroutines run: a reader that frames and decodes
// messages, answers ECHO_REQUEST, routes replies to Request callers and
// queues everything else for ReadMessage/Serve; a writer that drains the
// write queue in batches (one socket write for everything queued while the
// previous write was in flight); the echo keepalive; and, with
// IdleTimeout, the idle watchdog. The reader handles every complete
// message it has buffered before it reads the socket again, and the writer
// never waits for more before writing. The reader stops only while the
// read queue is full (the application is behind) or, with ReplyBacklog,
// while the peer leaves its replies unread. All methods are safe for
// concurrent use.
type Conn struct {
	nc    net.Conn
	cfg   ConnConfig
	log   *slog.Logger
	fr    *frameReader
	epoch time.Time

	xid atomic.Uint32
	// ch is the handshake and keepalive state machine.
	ch *Channel
	// hsOut collects the channel's messages until the writer runs
	// (running, under hsMu); the handshake writes them itself.
	hsMu    sync.Mutex
	hsOut   []byte
	running bool
	// readerBlocked is set while the reader waits for room in the inbox:
	// the peer's silence is then ours, not a sign of death (the idle
	// watchdog reads it; the channel is told by Hold).
	readerBlocked atomic.Bool

	// Write queue: messages are encoded straight into wbuf under wmu; the
	// writer swaps wbuf out and writes it whole.
	wmu      sync.Mutex
	notEmpty sync.Cond // writer waits for work
	notFull  sync.Cond // senders wait for room
	wbuf     []byte
	wcount   int  // messages in wbuf
	wclosed  bool // no more sends: closing or the writer failed
	closeDL  atomic.Int64
	// Reply backlog (ReplyBacklog): bytes of replies in wbuf (under wmu),
	// and of replies in wbuf or in the batch being written (atomic, so the
	// reader checks it without the lock; written under wmu).
	replyQueued  int
	replyPending atomic.Int64
	replyRoom    sync.Cond // WaitReplyRoom and the reader wait for the backlog to drain

	pmu      sync.Mutex
	pending  map[uint32]*pendingRequest
	npending atomic.Int32

	inbox chan Message

	startMu     sync.Mutex
	started     bool
	handshaking atomic.Bool // Handshake was called

	closeOnce sync.Once
	closing   chan struct{} // closed when shutdown begins
	done      chan struct{} // closed when every goroutine has exited
	errMu     sync.Mutex
	err       error
	wg        sync.WaitGroup

	stats   connCounters
	logRate LogLimiter
}

// NewConn wraps nc. Nothing is sent until Handshake.
func NewConn(nc net.Conn, cfg ConnConfig) *Conn {
	cfg = cfg.withDefaults()
	c := &Conn{
		nc:      nc,
		cfg:     cfg,
		log:     cfg.Logger.With("peer", remoteString(nc)),
		epoch:   time.Now(),
		pending: make(map[uint32]*pendingRequest),
		inbox:   make(chan Message, cfg.ReadQueue),
		closing: make(chan struct{}),
		done:    make(chan struct{}),
	}
	c.notEmpty.L = &c.wmu
	c.notFull.L = &c.wmu
	c.replyRoom.L = &c.wmu
	c.ch = NewChannel(ChannelConfig{
		Role: cfg.Role, Out: connSender{c},
		// The handshake is bounded by socket deadlines (HandshakeTimeout
		// and the context); the channel times the keepalive.
		HandshakeTimeout: -1,
		EchoInterval:     cfg.EchoInterval, EchoTimeout: cfg.EchoTimeout,
		MissSendLen: cfg.MissSendLen, NextXid: c.NextXid,
		OnFailed: func(err error) {
			c.hsMu.Lock()
			running := c.running
			c.hsMu.Unlock()
			if !running {
				return // the handshake returns err itself, after telling the peer why
			}
			if errors.Is(err, ErrPeerDead) {
				c.log.Warn("openflow: peer dead", "echo_interval", cfg.EchoInterval, "echo_timeout", cfg.EchoTimeout)
			}
			c.shutdown(err)
		},
	})
	c.fr = newFrameReader(activityReader{r: nc, c: c}, cfg.MaxMessageLen)
	return c
}

func remoteString(nc net.Conn) string {
	if a := nc.RemoteAddr(); a != nil {
		return a.String()
	}
	return "?"
}

// RemoteAddr is the peer's address.
func (c *Conn) RemoteAddr() net.Addr { return c.nc.RemoteAddr() }

// LocalAddr is our address.
func (c *Conn) LocalAddr() net.Addr { return c.nc.LocalAddr() }

// NetConn is the underlying connection (for example a *tls.Conn, to
// inspect the peer certificate). Do not read from or write to it.
func (c *Conn) NetConn() net.Conn { return c.nc }

// NextXid returns a fresh transaction id, never 0.
func (c *Conn) NextXid() uint32 {
	for {
		if x := c.xid.Add(1); x != 0 {
			return x
		}
	}
}

// Done is closed once the connection is fully closed and its goroutines
// have exited.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err is why the connection ended: nil while it is open, ErrClosed after a
// local Close, ErrPeerDead, or a read/write/protocol error (io.EOF wrapped
// when the peer closed).
func (c *Conn) Err() error {
	c.errMu.Lock()
	defer c.errMu.Unlock()
	return c.err
}

// Close flushes the write queue (bounded by CloseTimeout), closes the
// socket and waits for the connection's goroutines. Messages already
// received stay readable with ReadMessage. Close is idempotent and returns
// nil.
func (c *Conn) Close() error {
	c.shutdown(ErrClosed)
	<-c.done
	return nil
}

// shutdown starts closing with cause (only the first cause is kept): no
// more sends are accepted, the writer flushes what is queued and closes
// the socket, which stops the reader.
func (c *Conn) shutdown(cause error) {
	c.closeOnce.Do(func() {
		c.errMu.Lock()
		c.err = cause
		c.errMu.Unlock()
		switch {
		case cause == ErrClosed:
		case errors.Is(cause, io.EOF):
			// Normal for ovs-ofctl, which opens a connection per command.
			c.log.Debug("openflow connection closed by peer")
		default:
			c.log.Info("openflow connection closing", "err", cause)
		}
		c.ch.Stop()
		dl := time.Now().Add(c.cfg.CloseTimeout)
		c.closeDL.Store(dl.UnixNano())
		close(c.closing)

		c.wmu.Lock()
		c.wclosed = true
		c.notEmpty.Broadcast()
		c.notFull.Broadcast()
		c.replyRoom.Broadcast()
		c.wmu.Unlock()
		// Interrupt a write that is stuck on a peer that does not read.
		_ = c.nc.SetWriteDeadline(dl)

		c.startMu.Lock()
		started := c.started
		c.started = true // a late Handshake must not start goroutines
		c.startMu.Unlock()
		if !started {
			_ = c.nc.Close()
			close(c.inbox)
			close(c.done)
		}
	})
}

// start launches the reader, writer and keepalive after a handshake.
// It reports false if the connection was shut down meanwhile.
func (c *Conn) start() bool {
	c.startMu.Lock()
	defer c.startMu.Unlock()
	if c.started {
		return false
	}
	c.started = true
	c.hsMu.Lock()
	c.running = true
	c.hsMu.Unlock()
	c.ch.Activity()
	n := 2
	if c.cfg.IdleTimeout > 0 {
		n++
		go c.idleLoop()
	}
	c.wg.Add(n)
	go c.readLoop()
	go c.writeLoop()
	go func() {
		c.wg.Wait()
		c.failPending()
		close(c.done)
	}()
	return true
}

// hold tells the channel's keepalive and the idle watchdog that the
// reader stopped (or resumed) reading on our account.
func (c *Conn) hold(held bool) {
	c.readerBlocked.Store(held)
	c.ch.Hold(held)
}

// activityReader notes the time of every successful read for the keepalive
// (per read call, not per message, to keep the clock off the hot path).
type activityReader struct {
	r io.Reader
	c *Conn
}

func (a activityReader) Read(p []byte) (int, error) {
	n, err := a.r.Read(p)
	if n > 0 {
		a.c.ch.Activity()
	}
	return n, err
}

// ConnStats are a connection's counters since NewConn.
type ConnStats struct {
	MessagesIn  uint64 // whole frames received
	BytesIn     uint64
	MessagesOut uint64 // messages queued for writing
	BytesOut    uint64 // bytes written to the socket
	// WriteBatches counts socket writes; MessagesOut/WriteBatches is the
	// batching factor.
	WriteBatches uint64
	// DecodeErrors counts received frames that could not be decoded (each
	// answered with an OpenFlow ERROR unless it was itself an ERROR).
	DecodeErrors uint64
	// ControlDropped counts messages the connection gave up on itself
	// (see ConnConfig.OnControlDrop): automatic replies (ECHO_REPLY, ERROR)
	// dropped because the write queue was full, and keepalive probes.
	ControlDropped uint64
	// QueueFull counts sends that found the write queue full (refused by
	// SendNonBlocking or made to wait by Send).
	QueueFull uint64
	// ReplyBacklogPauses counts the times the reader stopped reading the
	// peer because its replies were not being read (ReplyBacklog).
	ReplyBacklogPauses uint64
	// EchoRTT is the round-trip time of the last answered keepalive echo.
	EchoRTT time.Duration
}

type connCounters struct {
	msgsIn, bytesIn, msgsOut, bytesOut, batches atomic.Uint64
	decodeErrors, controlDropped, queueFull     atomic.Uint64
	replyPauses                                 atomic.Uint64
}

// Stats returns a snapshot of the counters.
func (c *Conn) Stats() ConnStats {
	s := &c.stats
	return ConnStats{
		MessagesIn: s.msgsIn.Load(), BytesIn: s.bytesIn.Load(),
		MessagesOut: s.msgsOut.Load(), BytesOut: s.bytesOut.Load(),
		WriteBatches: s.batches.Load(), DecodeErrors: s.decodeErrors.Load(),
		ControlDropped: s.controlDropped.Load(), QueueFull: s.queueFull.Load(),
		ReplyBacklogPauses: s.replyPauses.Load(),
		EchoRTT:            c.ch.EchoRTT(),
	}
}

// LogLimiter lets a hostile peer produce at most one log line per second.
// The zero value is ready; it is not safe for concurrent use (a Conn's
// reader goroutine owns its own; the switch core guards its with its
// lock).
type LogLimiter struct {
	last       time.Time
	suppressed int
}

// Allow reports whether a line may be logged now, and if so how many were
// suppressed since the last one (log that number with the line).
func (l *LogLimiter) Allow() (ok bool, suppressed int) {
	now := time.Now()
	if now.Sub(l.last) < time.Second {
		l.suppressed++
		return false, 0
	}
	l.last, suppressed, l.suppressed = now, l.suppressed, 0
	return true, suppressed
}
