package live

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
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/pseudocong/pseudocong/probes"
	"github.com/pseudocong/pseudocong/testbed"
)

// TCPListenConfig configures ListenTCP.
type TCPListenConfig struct {
	Netns string
	Addr  netip.AddrPort
	// Ready, if set, receives the bound address once listening.
	Ready chan<- netip.AddrPort
	// Logger: default discard.
	Logger *slog.Logger
	// Registerer, if set, gets pseudocong_probe_listener_accepted_total.
	Registerer prometheus.Registerer
	// Echo makes each accepted connection send back what it reads until
	// the peer half-closes, then close (the data exchange of
	// TCPProbeConfig.Exchange). Off: close at once.
	Echo bool
}

// ListenTCP accepts connections on cfg.Addr inside cfg.Netns and closes
// each at once (or echoes it, cfg.Echo), until ctx ends. It returns the
// number accepted. The kernel completes handshakes before Accept, so the
// prober's handshake time is network delay plus the kernel's own
// processing.
func ListenTCP(ctx context.Context, cfg TCPListenConfig) (int, error) {
	accepted, err := listenerMetrics(cfg.Registerer)
	if err != nil {
		return 0, err
	}
	var ln net.Listener
	listen := func() (err error) {
		lc := net.ListenConfig{}
		ln, err = lc.Listen(ctx, "tcp4", cfg.Addr.String())
		return err
	}
	if cfg.Netns == "" {
		err = listen()
	} else {
		err = testbed.Do(cfg.Netns, listen)
	}
	if err != nil {
		return 0, fmt.Errorf("listen %s in %q: %w", cfg.Addr, cfg.Netns, err)
	}
	if cfg.Ready != nil {
		cfg.Ready <- netip.MustParseAddrPort(ln.Addr().String())
	}
	go func() { <-ctx.Done(); ln.Close() }()
	var echoes sync.WaitGroup
	defer echoes.Wait()
	n := 0
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return n, nil
			}
			return n, fmt.Errorf("accept: %w", err)
		}
		n++
		accepted.Inc()
		if !cfg.Echo {
			c.Close()
			continue
		}
		echoes.Add(1)
		go func() {
			defer echoes.Done()
			echo(ctx, c)
		}()
	}
}

// echo copies c's input back to it until EOF (or ctx ends), then closes
// it. Errors end the echo: the prober sees them as a short reply.
func echo(ctx context.Context, c net.Conn) {
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	defer c.Close()
	_, _ = io.Copy(c, c)
}

// DefaultConnectTimeout outlasts Linux's own SYN give-up (127 s with
// tcp_syn_retries = 6), so the kernel decides when a connect fails.
const DefaultConnectTimeout = 130 * time.Second

// TCPProbeConfig configures RunTCPProbe.
type TCPProbeConfig struct {
	Netns string
	Dst   netip.AddrPort
	Count int
	Rate  float64
	// Timeout bounds each connect; default DefaultConnectTimeout.
	Timeout time.Duration
	// Profile classifies handshake times; default probes.Linux() (the
	// timers of the kernel doing the connect).
	Profile  probes.TimerProfile
	Observer probes.Observer
	Logger   *slog.Logger
	// Exchange, if positive, is how many bytes each connection sends after
	// its handshake and reads back from an echoing listener
	// (TCPListenConfig.Echo) before closing: data segments whose
	// retransmissions and timeouts show up in the kernel's counters. 0:
	// connect only.
	Exchange int
}

// TCPResult is one connect().
type TCPResult struct {
	Index     int
	Connected bool
	// Handshake is from connect() until the socket became writable
	// (connected) or failed.
	Handshake time.Duration
	// Retransmits is tcpi_total_retrans after the handshake: the SYNs
	// the kernel resent.
	Retransmits int
	Err         error
	// With Exchange: DataRetransmits is tcpi_total_retrans at the end
	// minus Retransmits (the data segments the client resent), Exchanged
	// whether every byte came back, ExchangeTime the time from the end of
	// the handshake until then, ExchangeErr what went wrong.
	DataRetransmits int
	Exchanged       bool
	ExchangeTime    time.Duration
	ExchangeErr     error
}

// ConnectOnce makes one non-blocking connect() from a socket created in
// namespace nsh and waits until it completes or deadline passes. It
// returns the handshake time and the kernel's TCP_INFO.
func ConnectOnce(nsh netns.NsHandle, dst netip.AddrPort, deadline time.Time) (time.Duration, *unix.TCPInfo, error) {
	hs, info, f, err := connect(nsh, dst, deadline)
	if f != nil {
		f.Close()
	}
	return hs, info, err
}

// connect is ConnectOnce that hands back the connected socket (nil on
// error; the caller closes it).
func connect(nsh netns.NsHandle, dst netip.AddrPort, deadline time.Time) (time.Duration, *unix.TCPInfo, *os.File, error) {
	if !dst.Addr().Is4() {
		return 0, nil, nil, fmt.Errorf("connect %s: only IPv4", dst)
	}
	var fd int
	mk := func() (err error) {
		fd, err = unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
		return err
	}
	var err error
	if nsh == -1 {
		err = mk()
	} else {
		err = testbed.DoHandle(nsh, mk)
	}
	if err != nil {
		return 0, nil, nil, fmt.Errorf("socket: %w", err)
	}
	// Once created, the socket belongs to its namespace; connect() and
	// the wait can run on any thread.
	start := time.Now()
	err = unix.Connect(fd, &unix.SockaddrInet4{Port: int(dst.Port()), Addr: dst.Addr().As4()})
	if err != nil && !errors.Is(err, unix.EINPROGRESS) {
		unix.Close(fd)
		return time.Since(start), nil, nil, fmt.Errorf("connect %s: %w", dst, err)
	}
	f := os.NewFile(uintptr(fd), "tcp-probe") // non-blocking: uses the runtime poller
	ok := false
	defer func() {
		if !ok {
			f.Close()
		}
	}()
	if err := f.SetWriteDeadline(deadline); err != nil {
		return 0, nil, nil, err
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, nil, nil, err
	}
	var connErr error
	werr := rc.Write(func(s uintptr) bool {
		v, err := unix.GetsockoptInt(int(s), unix.SOL_SOCKET, unix.SO_ERROR)
		switch {
		case err != nil:
			connErr = err
		case v != 0:
			connErr = syscall.Errno(v)
		default:
			if _, err := unix.Getpeername(int(s)); err != nil {
				return false // still connecting: wait for writability
			}
		}
		return true
	})
	elapsed := time.Since(start)
	var info *unix.TCPInfo
	_ = rc.Control(func(s uintptr) { info, _ = unix.GetsockoptTCPInfo(int(s), unix.IPPROTO_TCP, unix.TCP_INFO) })
	switch {
	case werr != nil:
		return elapsed, info, nil, fmt.Errorf("connect %s: %w", dst, werr)
	case connErr != nil:
		return elapsed, info, nil, fmt.Errorf("connect %s: %w", dst, connErr)
	}
	if err := f.SetWriteDeadline(time.Time{}); err != nil {
		return elapsed, info, nil, err
	}
	ok = true
	return elapsed, info, f, nil
}

// exchange sends n bytes on the connected socket f, half-closes, reads
// until EOF and checks that n bytes came back, all before deadline. It
// closes f and fills r's exchange fields.
func exchange(f *os.File, n int, deadline time.Time, r *TCPResult) {
	start := time.Now()
	c, err := net.FileConn(f) // dups the descriptor
	f.Close()
	if err != nil {
		r.ExchangeErr = fmt.Errorf("exchange: %w", err)
		return
	}
	defer c.Close()
	tc := c.(*net.TCPConn)
	if err := tc.SetDeadline(deadline); err != nil {
		r.ExchangeErr = err
		return
	}
	got := make(chan int64, 1)
	go func() {
		m, _ := io.Copy(io.Discard, tc)
		got <- m
	}()
	_, werr := tc.Write(make([]byte, n))
	if werr == nil {
		werr = tc.CloseWrite()
	}
	m := <-got
	r.ExchangeTime = time.Since(start)
	rc, err := tc.SyscallConn()
	if err == nil {
		_ = rc.Control(func(s uintptr) {
			if info, err := unix.GetsockoptTCPInfo(int(s), unix.IPPROTO_TCP, unix.TCP_INFO); err == nil {
				r.DataRetransmits = max(int(info.Total_retrans)-r.Retransmits, 0)
			}
		})
	}
	switch {
	case werr != nil:
		r.ExchangeErr = fmt.Errorf("exchange: send %d bytes: %w", n, werr)
	case m != int64(n):
		r.ExchangeErr = fmt.Errorf("exchange: %d of %d bytes came back", m, n)
	default:
		r.Exchanged = true
	}
}

// RunTCPProbe makes Count connects to Dst at Rate (connect i starts at
// start + i/Rate) from inside Netns and reports handshake times, the
// kernel's SYN retransmissions, and how they compare with the timer
// profile's prediction.
func RunTCPProbe(ctx context.Context, cfg TCPProbeConfig) (*Report, []TCPResult, error) {
	if cfg.Count <= 0 || !(cfg.Rate > 0) {
		return nil, nil, fmt.Errorf("tcp probe: count %d and rate %v must be positive", cfg.Count, cfg.Rate)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultConnectTimeout
	}
	if cfg.Profile.Name == "" {
		cfg.Profile = probes.Linux()
	}
	nsh := netns.NsHandle(-1)
	if cfg.Netns != "" {
		h, err := netns.GetFromName(cfg.Netns)
		if err != nil {
			return nil, nil, fmt.Errorf("tcp probe: netns %s: %w", cfg.Netns, err)
		}
		defer h.Close()
		nsh = h
	}

	results := make([]TCPResult, cfg.Count)
	var wg sync.WaitGroup
	started := time.Now()
	complete := true
loop:
	for i := range cfg.Count {
		at := started.Add(time.Duration(float64(i) * float64(time.Second) / cfg.Rate))
		select {
		case <-ctx.Done():
			complete = false
			break loop
		case <-time.After(time.Until(at)):
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			deadline := time.Now().Add(cfg.Timeout)
			if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
				deadline = d
			}
			hs, info, f, err := connect(nsh, cfg.Dst, deadline)
			r := TCPResult{Index: i, Handshake: hs, Connected: err == nil, Err: err}
			if info != nil {
				r.Retransmits = int(info.Total_retrans)
			}
			if f != nil {
				if cfg.Exchange > 0 {
					exchange(f, cfg.Exchange, deadline, &r)
				} else {
					f.Close()
				}
			}
			if r.Connected && cfg.Observer != nil {
				cfg.Observer.ObserveRTT(probes.KindSYN, hs)
			}
			results[i] = r
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		complete = false
	}

	// Reuse the probes' summary and bins: a connect is a SYN probe.
	prs := make([]probes.Result, len(results))
	mismatches := 0
	rep := &Report{Kind: "tcp", Profile: cfg.Profile.Name, Count: cfg.Count, RatePPS: cfg.Rate, Started: started}
	for i, r := range results {
		prs[i] = probes.Result{Index: i, Answered: r.Connected, RTT: r.Handshake, Retransmits: r.Retransmits}
		rj := ResultJSON{Index: i, Tuple: cfg.Dst.String(), Answered: r.Connected, Retransmits: r.Retransmits}
		if r.Connected {
			rj.RTTS = r.Handshake.Seconds()
			if want, _ := probes.Retransmissions(cfg.Profile, probes.KindSYN, r.Handshake); want != r.Retransmits {
				mismatches++
			}
		}
		if r.Err != nil {
			rj.Error = r.Err.Error()
		}
		rep.Results = append(rep.Results, rj)
	}
	rep.DurationS = time.Since(started).Seconds()
	rep.Complete = complete
	rep.Summary = summaryJSON(probes.Summarize(prs))
	rep.Bins = bins(prs, cfg.Profile, probes.KindSYN)
	rep.ProfileMismatches = &mismatches
	return rep, results, nil
}
