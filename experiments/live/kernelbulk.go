package live

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pseudocong/pseudocong/tcp"
	"github.com/pseudocong/pseudocong/testbed"
)

// KernelBulkConfig is a set of kernel-TCP bulk flows from a socket per
// flow in ClientNetns to one sink in ServerNetns (iperf-like: the client
// writes as fast as the kernel takes the data, the sink reads and
// discards), each flow's sender sampled from TCP_INFO.
type KernelBulkConfig struct {
	ClientNetns, ServerNetns string
	Src, Dst                 netip.Addr
	// SrcPorts are the flows' source ports (the proactive rules match
	// them), one per flow; DstPort the sink's.
	SrcPorts []uint16
	DstPort  uint16
	// Rate is flows started per second (flow i connects at i/Rate).
	Rate float64
	// Duration is the run from the first flow's start; every flow writes
	// until then.
	Duration time.Duration
	// SampleInterval is the TCP_INFO sampling period (default 10 ms, the
	// sim's trace interval).
	SampleInterval time.Duration
	// CC is set on every sending socket (TCP_CONGESTION); "": the
	// namespace's default.
	CC string
}

// KernelFlow is one kernel flow's outcome.
type KernelFlow struct {
	SrcPort     uint16
	Established bool
	// Err is why the flow did not connect or stopped early ("" if not).
	Err string
	// Started is the connect's offset from the run's start; Active the
	// time from then to the end (the sim's BulkFlow.Active).
	Started, Active time.Duration
	// Handshake is how long connect() took.
	Handshake time.Duration
	// Received is the payload the sink read by the end.
	Received uint64
	// SYNRetrans is tcpi_total_retrans right after the handshake (the
	// SYNs the kernel resent); Timeouts is tcpi_total_rto at the end
	// (every RTO expiry, SYN and data: the sim's TCPTimeouts); Retrans is
	// tcpi_total_retrans at the end (the sim's RetransSegs).
	SYNRetrans, Timeouts, RTORecoveries, Retrans uint64
	// TimeCwnd1 and ShareCwnd1 are the time (and share of the traced
	// time) the sampled snd_cwnd was 1 (tcp.Trace.TimeAtCwnd).
	TimeCwnd1  time.Duration
	ShareCwnd1 float64
	// Trace is the flow's TCP_INFO samples from its connect on, in the
	// sim tracer's shape (T since the connect).
	Trace tcp.Trace
}

// GoodputBps is the flow's goodput over its active time.
func (f KernelFlow) GoodputBps() float64 {
	if f.Active <= 0 {
		return 0
	}
	return float64(f.Received) * 8 / f.Active.Seconds()
}

// Linux's tcp_ca_state names (include/net/tcp.h), for Sample.Phase.
var caStates = [...]string{"open", "disorder", "cwr", "recovery", "loss"}

// sampleOf converts one TCP_INFO into a trace sample at t.
func sampleOf(t time.Duration, in *unix.TCPInfo) tcp.Sample {
	phase := "unknown"
	if int(in.Ca_state) < len(caStates) {
		phase = caStates[in.Ca_state]
	}
	return tcp.Sample{
		T: t, Cwnd: in.Snd_cwnd, Ssthresh: in.Snd_ssthresh, // 0x7fffffff: infinite, as tcp.Trace writes it
		SRTT: time.Duration(in.Rtt) * time.Microsecond, RTO: time.Duration(in.Rto) * time.Microsecond,
		BytesInFlight:  uint64(in.Unacked) * uint64(in.Snd_mss),
		DeliveredBytes: in.Bytes_acked, Retrans: uint64(in.Total_retrans), Phase: phase,
	}
}

// sink accepts the flows in one namespace and counts what each source
// port sent.
type sink struct {
	ln      net.Listener
	mu      sync.Mutex
	bytes   map[uint16]*atomic.Uint64
	conns   []net.Conn
	wg      sync.WaitGroup
	readers sync.WaitGroup
	// accepting is closed when the accept loop has returned.
	accepting chan struct{}
}

func startSink(ns string, addr netip.AddrPort, ports []uint16) (*sink, error) {
	s := &sink{bytes: map[uint16]*atomic.Uint64{}, accepting: make(chan struct{})}
	for _, p := range ports {
		s.bytes[p] = new(atomic.Uint64)
	}
	err := testbed.Do(ns, func() (err error) {
		s.ln, err = net.Listen("tcp4", addr.String())
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("bulk sink on %s in %s: %w", addr, ns, err)
	}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

func (s *sink) accept() {
	defer s.wg.Done()
	defer close(s.accepting)
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return // closed by stop
		}
		ap, _ := netip.ParseAddrPort(c.RemoteAddr().String())
		ctr := s.bytes[ap.Port()]
		if ctr == nil {
			c.Close() // not one of the run's flows
			continue
		}
		s.mu.Lock()
		s.conns = append(s.conns, c)
		s.mu.Unlock()
		s.wg.Add(1)
		s.readers.Add(1)
		go func() {
			defer s.wg.Done()
			defer s.readers.Done()
			buf := make([]byte, 256<<10)
			for {
				n, err := c.Read(buf)
				ctr.Add(uint64(n))
				if err != nil {
					return
				}
			}
		}()
	}
}

// received is what the sink has read from port so far.
func (s *sink) received(port uint16) uint64 {
	if c := s.bytes[port]; c != nil {
		return c.Load()
	}
	return 0
}

// drain waits up to limit for every connection to end from the client's
// side (the senders' RSTs), so that the sink's own close sends nothing
// into a switch that may be gone by then (the next run's switch has no
// rule for it: a table miss).
func (s *sink) drain(limit time.Duration) {
	s.ln.Close() // no new readers from here on
	<-s.accepting
	done := make(chan struct{})
	go func() { s.readers.Wait(); close(done) }()
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}

func (s *sink) stop() {
	s.ln.Close()
	s.mu.Lock()
	for _, c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// kernelSender is one flow's client socket.
type kernelSender struct {
	conn  *net.TCPConn
	raw   syscall.RawConn
	start time.Time
	flow  *KernelFlow
}

func (k *kernelSender) info() (*unix.TCPInfo, error) {
	var in *unix.TCPInfo
	var ierr error
	err := k.raw.Control(func(fd uintptr) { in, ierr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO) })
	return in, errors.Join(err, ierr)
}

// RunKernelBulk runs the flows and returns one KernelFlow per source
// port. Flows that fail to connect are reported in their Err; the run
// fails only when the sink cannot start or ctx ends.
func RunKernelBulk(ctx context.Context, cfg KernelBulkConfig) ([]KernelFlow, error) {
	if len(cfg.SrcPorts) == 0 || !(cfg.Rate > 0) || cfg.Duration <= 0 {
		return nil, fmt.Errorf("kernel bulk: %d flows, rate %v, duration %v: all must be positive", len(cfg.SrcPorts), cfg.Rate, cfg.Duration)
	}
	if cfg.SampleInterval <= 0 {
		cfg.SampleInterval = 10 * time.Millisecond
	}
	dst := netip.AddrPortFrom(cfg.Dst, cfg.DstPort)
	sk, err := startSink(cfg.ServerNetns, dst, cfg.SrcPorts)
	if err != nil {
		return nil, err
	}
	defer sk.stop()

	flows := make([]KernelFlow, len(cfg.SrcPorts))
	start := time.Now()
	end := start.Add(cfg.Duration)
	runCtx, cancel := context.WithDeadline(ctx, end)
	defer cancel()

	var (
		mu      sync.Mutex
		senders []*kernelSender
		wg      sync.WaitGroup
		// sampled is closed after the final sample: the senders close
		// their sockets only then.
		sampled = make(chan struct{})
	)
	defer func() {
		select {
		case <-sampled:
		default:
			close(sampled)
		}
	}()
	for i, port := range cfg.SrcPorts {
		flows[i].SrcPort = port
		at := start.Add(time.Duration(float64(i) / cfg.Rate * float64(time.Second)))
		wg.Add(1)
		go func(f *KernelFlow) {
			defer wg.Done()
			t := time.NewTimer(time.Until(at))
			defer t.Stop()
			select {
			case <-t.C:
			case <-runCtx.Done():
				f.Err = "never started: the run ended first"
				return
			}
			began := time.Now()
			f.Started, f.Active = began.Sub(start), end.Sub(began)
			conn, err := dialFlow(runCtx, cfg, port, dst)
			f.Handshake = time.Since(began)
			if err != nil {
				f.Err = err.Error()
				return
			}
			// An abortive close (RST) once sampled: no FIN or unsent data
			// outlives the run and retransmits into the next one, whose
			// switch has no rules for it.
			defer func() { _ = conn.SetLinger(0); conn.Close() }()
			raw, err := conn.SyscallConn()
			if err != nil {
				f.Err = err.Error()
				return
			}
			ks := &kernelSender{conn: conn, raw: raw, start: began, flow: f}
			if in, err := ks.info(); err == nil {
				f.SYNRetrans = uint64(in.Total_retrans)
				f.Trace.Samples = append(f.Trace.Samples, sampleOf(time.Since(began), in))
			}
			f.Established = true
			mu.Lock()
			senders = append(senders, ks)
			mu.Unlock()
			_ = conn.SetWriteDeadline(end)
			stopWrites := context.AfterFunc(runCtx, func() { _ = conn.SetWriteDeadline(time.Now()) })
			defer stopWrites()
			buf := make([]byte, 128<<10)
			for {
				if _, err := conn.Write(buf); err != nil {
					if !errors.Is(err, os.ErrDeadlineExceeded) {
						f.Err = err.Error()
					}
					break
				}
			}
			// Hold the socket open until the final sample.
			<-sampled
		}(&flows[i])
	}

	// Sample every established sender every interval until the end, then
	// once more at the end (the counters' final values).
	tick := time.NewTicker(cfg.SampleInterval)
	sample := func() {
		mu.Lock()
		defer mu.Unlock()
		now := time.Now()
		for _, ks := range senders {
			if in, err := ks.info(); err == nil {
				ks.flow.Trace.Samples = append(ks.flow.Trace.Samples, sampleOf(now.Sub(ks.start), in))
				ks.flow.Timeouts, ks.flow.RTORecoveries = uint64(in.Total_rto), uint64(in.Total_rto_recoveries)
				ks.flow.Retrans = uint64(in.Total_retrans)
			}
		}
	}
loop:
	for {
		select {
		case <-tick.C:
			sample()
		case <-runCtx.Done():
			break loop
		}
	}
	tick.Stop()
	// The sink's counts and the last sample, before any socket closes
	// (the senders hold theirs until sampled is closed).
	mu.Lock()
	for i := range flows {
		flows[i].Received = sk.received(flows[i].SrcPort)
	}
	mu.Unlock()
	sample()
	close(sampled)
	wg.Wait()
	sk.drain(3 * time.Second)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for i := range flows {
		f := &flows[i]
		f.Trace.Name = fmt.Sprintf("flow%d", i)
		f.TimeCwnd1, f.ShareCwnd1 = f.Trace.TimeAtCwnd(1)
	}
	return flows, nil
}

// dialFlow connects one flow from src:port inside the client namespace.
func dialFlow(ctx context.Context, cfg KernelBulkConfig, port uint16, dst netip.AddrPort) (*net.TCPConn, error) {
	d := net.Dialer{
		LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(cfg.Src, port)),
		Control: func(_, _ string, c syscall.RawConn) error {
			var serr error
			err := c.Control(func(fd uintptr) {
				// A fixed source port: the previous run's TIME_WAIT must
				// not refuse it.
				serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
				if serr == nil && cfg.CC != "" {
					serr = unix.SetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION, cfg.CC)
				}
			})
			return errors.Join(err, serr)
		},
	}
	var c net.Conn
	err := testbed.Do(cfg.ClientNetns, func() (err error) {
		c, err = d.DialContext(ctx, "tcp4", dst.String())
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("connect %s:%d -> %s: %w", cfg.Src, port, dst, err)
	}
	return c.(*net.TCPConn), nil
}
