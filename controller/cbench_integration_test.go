//go:build integration

package controller_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/controller/loadgen"
	"github.com/pseudocong/pseudocong/internal/testenv"
	"github.com/pseudocong/pseudocong/openflow"
)

// The cbench comparison (issue 9, Performance): OFLOPS cbench measures a
// controller in two modes, and so do we, side by side in one run.
//
//   - throughput: 16 emulated switches × 1000 MACs keep their sockets full;
//     ours against a null controller, the ceiling of the measurement;
//   - latency: 4 switches, one PACKET_IN outstanding each; ours against
//     Debian's ovs-testcontroller and the null controller.
//
// Each controller is a separate process sharing the machine with the load
// generator. The machine is shared, so the ratios of one run are the result,
// not the absolute numbers.

// nullChildEnv makes the test binary run the null controller.
const nullChildEnv = "PSEUDOCONG_TEST_NULL_CONTROLLER_CHILD"

// runNullController is the null controller cbench's authors use as the
// ceiling: it answers every PACKET_IN with one canned FLOW_MOD (ADD) and
// parses nothing but the framing. One goroutine per switch reads what the
// socket has, answers the whole batch in one write, and reads again.
func runNullController() int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "null controller:", err)
		return 1
	}
	fmt.Println(ln.Addr().String())
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		_ = ln.Close()
	}()
	flowMod, err := (&openflow.FlowMod{
		Match:       openflow.Match{Wildcards: openflow.WildcardAll &^ openflow.WildcardDlDst},
		Command:     openflow.FlowModAdd,
		IdleTimeout: 60, Priority: 0x8000, BufferID: openflow.NoBuffer,
		Actions: []openflow.Action{&openflow.ActionOutput{Port: 1}},
	}).AppendBinary(nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "null controller:", err)
		return 1
	}
	greeting := append(
		must((&openflow.Hello{Header: openflow.Header{Xid: 1}}).AppendBinary(nil)),
		must((&openflow.FeaturesRequest{Header: openflow.Header{Xid: 2}}).AppendBinary(nil))...)
	for {
		nc, err := ln.Accept()
		if err != nil {
			return 0
		}
		go serveNull(nc, greeting, flowMod)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

func serveNull(nc net.Conn, greeting, flowMod []byte) {
	defer nc.Close()
	if _, err := nc.Write(greeting); err != nil {
		return
	}
	buf := make([]byte, 256<<10)
	var out []byte
	r, w := 0, 0
	for {
		if len(buf)-w < openflow.MaxMessageLen {
			w = copy(buf, buf[r:w])
			r = 0
		}
		n, err := nc.Read(buf[w:])
		if err != nil {
			return
		}
		w += n
		for w-r >= openflow.HeaderLen {
			l := int(binary.BigEndian.Uint16(buf[r+2:]))
			if l < openflow.HeaderLen {
				return
			}
			if w-r < l {
				break
			}
			switch openflow.Type(buf[r+1]) {
			case openflow.TypePacketIn:
				out = append(out, flowMod...)
			case openflow.TypeEchoRequest:
				out = append(out, buf[r:r+l]...)
				out[len(out)-l+1] = byte(openflow.TypeEchoReply)
			}
			r += l
		}
		if r == w {
			r, w = 0, 0
		}
		if len(out) > 0 {
			if _, err := nc.Write(out); err != nil {
				return
			}
			out = out[:0]
		}
	}
}

// startNullController starts the null controller as a child process.
func startNullController(tb testing.TB) string {
	tb.Helper()
	return startChild(tb, nullChildEnv)
}

// contender is one controller under test.
type contender struct{ name, addr string }

// cbenchRounds is how many times each contender is measured, in turn: the
// machine is shared, its load changes by the second, so contenders
// measured one after the other for long would see different machines.
// Interleaved short rounds see the same mix, and each round's ratios
// compare measurements taken seconds apart.
const cbenchRounds = 3

// cbenchCompare measures every contender cbenchRounds times, in turn, and
// returns each one's mean responses/s per round ([contender][round]).
func cbenchCompare(tb testing.TB, mode loadgen.Mode, switches int, cs []contender) [][]float64 {
	tb.Helper()
	res := make([][]float64, len(cs))
	for round := range cbenchRounds {
		for i, c := range cs {
			fmt.Printf("--- %s, %s mode, %d switches, round %d ---\n", c.name, mode, switches, round+1)
			r, err := loadgen.Run(context.Background(), loadgen.Config{Controller: "tcp:" + c.addr, Switches: switches, MACs: 1000,
				Mode: mode, Duration: time.Second, Loops: 2, Out: os.Stdout})
			if err != nil {
				tb.Fatalf("%s, %s mode: %v", c.name, mode, err)
			}
			if r.Avg <= 0 {
				tb.Fatalf("%s answered nothing in %s mode: the load generator is broken", c.name, mode)
			}
			res[i] = append(res[i], r.Avg)
		}
	}
	return res
}

// mean and medianRatio summarise cbenchCompare's rounds.
func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func medianRatio(a, b []float64) float64 {
	r := make([]float64, len(a))
	for i := range a {
		r[i] = a[i] / b[i]
	}
	sort.Float64s(r)
	if n := len(r); n%2 == 0 {
		return (r[n/2-1] + r[n/2]) / 2
	} else {
		return r[n/2]
	}
}

// BenchmarkCbenchThroughputVsNullController: 16 switches × 1000 MACs,
// throughput mode, ours and the null controller in turn in the same run.
// ours/null is the median of the rounds' ratios.
func BenchmarkCbenchThroughputVsNullController(b *testing.B) {
	testenv.RequireRoot(b)
	r := cbenchCompare(b, loadgen.Throughput, 16, []contender{
		{"pseudocong (reactive)", startChildController(b)}, {"null controller", startNullController(b)}})
	ours, null := r[0], r[1]
	fmt.Printf("throughput: ours %.0f, null %.0f responses/s (means of %d rounds), ours/null %.2f (median of rounds)\n",
		mean(ours), mean(null), cbenchRounds, medianRatio(ours, null))
	b.ReportMetric(mean(ours), "ours_responses/s")
	b.ReportMetric(mean(null), "null_responses/s")
	b.ReportMetric(medianRatio(ours, null), "ours/null")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkCbenchLatencyVsOVSTestController: 4 switches, one PACKET_IN
// outstanding each; ours, ovs-testcontroller and the null controller in
// turn in the same run.
func BenchmarkCbenchLatencyVsOVSTestController(b *testing.B) {
	testenv.RequireRoot(b)
	r := cbenchCompare(b, loadgen.Latency, 4, []contender{
		{"ovs-testcontroller", testenv.StartOVSTestController(b)},
		{"pseudocong (reactive)", startChildController(b)},
		{"null controller", startNullController(b)}})
	ovs, ours, null := r[0], r[1], r[2]
	fmt.Printf("latency: ours %.0f, ovs-testcontroller %.0f, null %.0f responses/s (means of %d rounds); ours/ovs %.2f, ours/null %.2f (medians of rounds)\n",
		mean(ours), mean(ovs), mean(null), cbenchRounds, medianRatio(ours, ovs), medianRatio(ours, null))
	b.ReportMetric(mean(ours), "ours_responses/s")
	b.ReportMetric(mean(ovs), "ovs-testcontroller_responses/s")
	b.ReportMetric(mean(null), "null_responses/s")
	b.ReportMetric(medianRatio(ours, ovs), "ours/ovs-testcontroller")
	b.ReportMetric(medianRatio(ours, null), "ours/null")
	b.ReportMetric(0, "ns/op")
}
