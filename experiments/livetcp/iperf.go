package livetcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/pseudocong/pseudocong/internal/nstat"
)

// Iperf is one iperf3 transfer between the bed's hosts.
type Iperf struct {
	// ClientCC and ServerCC are each host namespace's default congestion
	// control for this run; CC, if set, is also passed as -C (iperf3 sets
	// it on the client's socket and asks the server to do the same).
	ClientCC, ServerCC, CC string
	// MSS is -M (TCP_MAXSEG); 0: the kernel's.
	MSS int
	// Reverse is -R: the server sends (a download).
	Reverse bool
	// Duration (-t) and Omit (-O); Bytes, if > 0, is -n instead of -t.
	Duration, Omit time.Duration
	Bytes          int64
	// Interval is -i, the series' bin; 0: 100 ms.
	Interval time.Duration
	Port     int // 0: 5201
	// Parallel is -P: this many streams at once (0 or 1: one).
	Parallel int
}

// Result is a transfer's outcome.
type Result struct {
	// GoodputMbps is the receiver's rate after Omit (iperf3's
	// sum_received).
	GoodputMbps float64
	Seconds     float64
	// Retransmits is the sender namespace's TcpRetransSegs from Omit
	// after the client started to the end (nstat sampled then; the
	// client's connection setup makes the cut a few milliseconds early),
	// the steady state as iperf3 -O counts it.
	Retransmits uint64
	// RetransmitsAll is the sender namespace's TcpRetransSegs over the
	// whole run, the omitted start (slow start) included (nstat).
	RetransmitsAll uint64
	// Recoveries is the sender namespace's fast recoveries over the whole
	// run (TcpExtTCPSackRecovery + TcpExtTCPRenoRecovery): its loss
	// episodes, each one window reduction, however many segments each
	// retransmits.
	Recoveries uint64
	// HyStartExits is how many times CUBIC's HyStart ended a slow start
	// over the run (TcpExtTCPHystartTrainDetect + DelayDetect), and
	// HyStartCwnd the sum of the windows it ended them at (the kernel adds
	// each exit's cwnd to TcpExtTCPHystart{Train,Delay}Cwnd).
	HyStartExits, HyStartCwnd uint64
	// Series is the receiver's goodput per Interval, omitted intervals
	// included, Mbit/s.
	Series []float64
	// RetxSeries is the sender's retransmissions per Interval (iperf3's
	// per-interval count from TCP_INFO).
	RetxSeries []int64
	// SenderCC and ReceiverCC are what iperf3 reports the sockets used.
	SenderCC, ReceiverCC string
	// StreamsMbps is each stream's receiver goodput (iperf3's
	// end.streams[].receiver), in stream order; the first is the stream
	// that connected first.
	StreamsMbps []float64
}

type iperfJSON struct {
	Intervals []iperfInterval `json:"intervals"`
	End       struct {
		SumReceived struct {
			Seconds       float64 `json:"seconds"`
			Bytes         float64 `json:"bytes"`
			BitsPerSecond float64 `json:"bits_per_second"`
		} `json:"sum_received"`
		SenderCC   string `json:"sender_tcp_congestion"`
		ReceiverCC string `json:"receiver_tcp_congestion"`
		Streams    []struct {
			Receiver struct {
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"receiver"`
		} `json:"streams"`
	} `json:"end"`
	ServerOutput *iperfJSON `json:"server_output_json"`
	Error        string     `json:"error"`
}

// Run runs one transfer: a one-off server in the server's namespace, the
// client in the client's, both namespaces' default CC set first.
func (b *Bed) Run(ctx context.Context, r Iperf) (*Result, error) {
	if r.Interval == 0 {
		r.Interval = 100 * time.Millisecond
	}
	if r.Port == 0 {
		r.Port = 5201
	}
	if err := r.check(); err != nil {
		return nil, err
	}
	for _, x := range []struct{ ns, cc string }{{b.Client.Netns, r.ClientCC}, {b.Server.Netns, r.ServerCC}} {
		if x.cc != "" {
			if err := NetnsSysctl(x.ns, "net.ipv4.tcp_congestion_control", x.cc); err != nil {
				return nil, err
			}
		}
	}
	sender := b.Client.Netns
	if r.Reverse {
		sender = b.Server.Netns
	}
	ip := b.Server.Addr.Addr().String()
	limit := r.Duration + 30*time.Second
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	port := strconv.Itoa(r.Port)
	interval := strconv.FormatFloat(r.Interval.Seconds(), 'f', -1, 64)
	srv := exec.CommandContext(ctx, "ip", "netns", "exec", b.Server.Netns, "iperf3", "-s", "-1", "-B", ip, "-p", port,
		// -J so that the client's --get-server-output is JSON (text
		// otherwise), -i because the client's -i does not reach the
		// server: the server's intervals are the receiver's series of
		// an upload and the sender's of a download.
		"-J", "-i", interval)
	var srvOut bytes.Buffer
	srv.Stdout, srv.Stderr = &srvOut, &srvOut
	if err := srv.Start(); err != nil {
		return nil, fmt.Errorf("livetcp: iperf3 server: %w", err)
	}
	defer func() { _ = srv.Process.Kill(); _ = srv.Wait() }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, _ := exec.Command("ip", "netns", "exec", b.Server.Netns, "ss", "-Hltn", "sport = :"+port).Output()
		if len(out) > 0 {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("livetcp: iperf3 server not listening within 10 s: %s", srvOut.String())
		}
		time.Sleep(50 * time.Millisecond) // polling, not asserting
	}
	before, err := readSenderMIB(ctx, sender)
	if err != nil {
		return nil, err
	}
	args := []string{"netns", "exec", b.Client.Netns, "iperf3", "-c", ip, "-p", port, "-J", "--get-server-output",
		"-i", interval}
	if r.Bytes > 0 {
		args = append(args, "-n", strconv.FormatInt(r.Bytes, 10))
	} else {
		args = append(args, "-t", strconv.FormatFloat(r.Duration.Seconds(), 'f', -1, 64))
		if r.Omit > 0 {
			args = append(args, "-O", strconv.FormatFloat(r.Omit.Seconds(), 'f', -1, 64))
		}
	}
	if r.CC != "" {
		args = append(args, "-C", r.CC)
	}
	if r.MSS > 0 {
		args = append(args, "-M", strconv.Itoa(r.MSS))
	}
	if r.Reverse {
		args = append(args, "-R")
	}
	if r.Parallel > 1 {
		args = append(args, "-P", strconv.Itoa(r.Parallel))
	}
	client := exec.CommandContext(ctx, "ip", args...)
	var stdout bytes.Buffer
	client.Stdout = &stdout
	atOmit := make(chan uint64, 1)
	var omitErr error
	if err := client.Start(); err != nil {
		return nil, fmt.Errorf("livetcp: iperf3 client: %w", err)
	}
	omitTimer := time.AfterFunc(r.Omit, func() {
		v, err := readSenderMIB(ctx, sender)
		omitErr = err
		atOmit <- v.retrans
	})
	err = client.Wait()
	out := stdout.Bytes()
	if omitTimer.Stop() {
		atOmit <- before.retrans
	}
	omitV := <-atOmit
	if omitErr != nil {
		return nil, omitErr
	}
	var j iperfJSON
	if jerr := json.Unmarshal(out, &j); jerr != nil {
		return nil, fmt.Errorf("livetcp: iperf3 %s: %v; JSON: %v\n%s", strings.Join(args[3:], " "), err, jerr, out)
	}
	if err != nil || j.Error != "" {
		return nil, fmt.Errorf("livetcp: iperf3 %s: %v %s", strings.Join(args[3:], " "), err, j.Error)
	}
	after, err := readSenderMIB(ctx, sender)
	if err != nil {
		return nil, err
	}
	res := &Result{GoodputMbps: j.End.SumReceived.BitsPerSecond / 1e6, Seconds: j.End.SumReceived.Seconds,
		Retransmits: after.retrans - omitV, RetransmitsAll: after.retrans - before.retrans,
		Recoveries: after.recoveries - before.recoveries, HyStartExits: after.hystartExits - before.hystartExits,
		HyStartCwnd: after.hystartCwnd - before.hystartCwnd, SenderCC: j.End.SenderCC, ReceiverCC: j.End.ReceiverCC}
	for _, st := range j.End.Streams {
		res.StreamsMbps = append(res.StreamsMbps, st.Receiver.BitsPerSecond/1e6)
	}
	if err := j.series(res, r); err != nil {
		return nil, fmt.Errorf("livetcp: iperf3 %s: %w", strings.Join(args[3:], " "), err)
	}
	if r.Omit == 0 || r.Bytes > 0 {
		res.Retransmits = res.RetransmitsAll
	}
	if r.Bytes > 0 {
		// -n: the whole transfer is the window.
		res.GoodputMbps = float64(r.Bytes) * 8 / j.End.SumReceived.Seconds / 1e6
	}
	return res, nil
}

// senderMIB is the part of a namespace's TCP counters a run reports,
// absolute (every connection in the namespace since it was made).
type senderMIB struct {
	retrans, recoveries, hystartExits, hystartCwnd uint64
}

// mibCounters are the nstat names a senderMIB is made of.
var mibCounters = []string{"TcpRetransSegs", "TcpExtTCPSackRecovery", "TcpExtTCPRenoRecovery",
	"TcpExtTCPHystartTrainDetect", "TcpExtTCPHystartDelayDetect", "TcpExtTCPHystartTrainCwnd", "TcpExtTCPHystartDelayCwnd"}

// readSenderMIB reads a namespace's counters.
func readSenderMIB(ctx context.Context, netns string) (senderMIB, error) {
	m, err := nstat.Read(ctx, netns, mibCounters...)
	if err != nil {
		return senderMIB{}, fmt.Errorf("livetcp: %w", err)
	}
	return senderMIBOf(m), nil
}

// senderMIBOf adds up nstat's counters (mibCounters) into a senderMIB.
func senderMIBOf(v map[string]uint64) senderMIB {
	return senderMIB{
		retrans:      v["TcpRetransSegs"],
		recoveries:   v["TcpExtTCPSackRecovery"] + v["TcpExtTCPRenoRecovery"],
		hystartExits: v["TcpExtTCPHystartTrainDetect"] + v["TcpExtTCPHystartDelayDetect"],
		hystartCwnd:  v["TcpExtTCPHystartTrainCwnd"] + v["TcpExtTCPHystartDelayCwnd"],
	}
}

// iperfInterval is one of iperf3's -i reports.
type iperfInterval struct {
	Sum struct {
		Start       float64 `json:"start"`
		End         float64 `json:"end"`
		Seconds     float64 `json:"seconds"`
		Bytes       float64 `json:"bytes"`
		Retransmits int64   `json:"retransmits"`
	} `json:"sum"`
}

// series fills res.Series from the receiver's intervals (the server's for
// an upload, the client's for a download) and res.RetxSeries from the
// sender's (only the sender reports retransmissions). Without the
// server's JSON one of the two would silently come from the wrong end,
// so that is an error.
func (j *iperfJSON) series(res *Result, r Iperf) error {
	if j.ServerOutput == nil {
		return fmt.Errorf("no server_output_json: the server must run with -J")
	}
	recv, send := j.ServerOutput.Intervals, j.Intervals
	if r.Reverse {
		recv, send = send, recv
	}
	for _, x := range recv {
		if s, ok := x.seconds(r.Interval); ok {
			res.Series = append(res.Series, x.Sum.Bytes*8/s/1e6)
		}
	}
	for _, x := range send {
		if _, ok := x.seconds(r.Interval); ok {
			res.RetxSeries = append(res.RetxSeries, x.Sum.Retransmits)
		}
	}
	return nil
}

// seconds is the length of the interval, and whether it is a bin of the
// series. iperf3 3.12's client reports the interval at the end of the
// omitted start with end ≈ start and twice its length in "seconds" (so
// half its rate in "bits_per_second"), though its bytes are one bin's,
// and it reports one omitted bin fewer than the server. An interval whose
// two lengths disagree therefore counts as the nominal one. An interval
// shorter than half a bin (the last few milliseconds a server can report
// after the client stopped) is not a bin.
func (x *iperfInterval) seconds(nominal time.Duration) (float64, bool) {
	s, n := x.Sum.End-x.Sum.Start, nominal.Seconds()
	if math.Abs(s-x.Sum.Seconds) > 0.01*n {
		s = n
	}
	return s, s >= n/2
}

// check refuses what iperf3 would silently change: 3.12 truncates -t and
// -O to whole seconds (-t 1.5 runs 1 s).
func (r Iperf) check() error {
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{{"-t", r.Duration}, {"-O", r.Omit}} {
		if d.v < 0 || d.v%time.Second != 0 {
			return fmt.Errorf("livetcp: iperf3 %s %v: want a whole number of seconds (iperf3 truncates it)", d.flag, d.v)
		}
	}
	return nil
}
