//go:build integration

package controller_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
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

// cbenchRun runs one cbench-style measurement and returns the mean
// responses/s.
func cbenchRun(tb testing.TB, name, addr string, mode loadgen.Mode, switches int) float64 {
	tb.Helper()
	fmt.Printf("--- %s, %s mode, %d switches ---\n", name, mode, switches)
	r, err := loadgen.Run(context.Background(), loadgen.Config{Controller: "tcp:" + addr, Switches: switches, MACs: 1000,
		Mode: mode, Duration: time.Second, Loops: 5, Out: os.Stdout})
	if err != nil {
		tb.Fatalf("%s, %s mode: %v", name, mode, err)
	}
	if r.Avg <= 0 {
		tb.Fatalf("%s answered nothing in %s mode: the load generator is broken", name, mode)
	}
	return r.Avg
}

// BenchmarkCbenchThroughputVsNullController: 16 switches × 1000 MACs,
// throughput mode, ours and the null controller in the same run.
func BenchmarkCbenchThroughputVsNullController(b *testing.B) {
	testenv.RequireRoot(b)
	ours := cbenchRun(b, "pseudocong (reactive)", startChildController(b), loadgen.Throughput, 16)
	null := cbenchRun(b, "null controller", startNullController(b), loadgen.Throughput, 16)
	fmt.Printf("throughput: ours %.0f, null %.0f responses/s, ratio %.2f\n", ours, null, ours/null)
	b.ReportMetric(ours, "ours_responses/s")
	b.ReportMetric(null, "null_responses/s")
	b.ReportMetric(ours/null, "ours/null")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkCbenchLatencyVsOVSTestController: 4 switches, one PACKET_IN
// outstanding each; ours, ovs-testcontroller and the null controller in
// the same run.
func BenchmarkCbenchLatencyVsOVSTestController(b *testing.B) {
	testenv.RequireRoot(b)
	ovs := cbenchRun(b, "ovs-testcontroller", testenv.StartOVSTestController(b), loadgen.Latency, 4)
	ours := cbenchRun(b, "pseudocong (reactive)", startChildController(b), loadgen.Latency, 4)
	null := cbenchRun(b, "null controller", startNullController(b), loadgen.Latency, 4)
	fmt.Printf("latency: ours %.0f, ovs-testcontroller %.0f, null %.0f responses/s; ours/ovs %.2f, ours/null %.2f\n",
		ours, ovs, null, ours/ovs, ours/null)
	b.ReportMetric(ours, "ours_responses/s")
	b.ReportMetric(ovs, "ovs-testcontroller_responses/s")
	b.ReportMetric(null, "null_responses/s")
	b.ReportMetric(ours/ovs, "ours/ovs-testcontroller")
	b.ReportMetric(0, "ns/op")
}
