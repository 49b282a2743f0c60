package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pseudocong/pseudocong/netsim"
	"github.com/pseudocong/pseudocong/tcp"
	"github.com/pseudocong/pseudocong/tcp/cc"
	"github.com/pseudocong/pseudocong/tcp/dumbbell"
)

// newTCPCommand is `pseudocong tcp`: the simulator's TCP.
func newTCPCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tcp",
		Short: "TCP in the simulator (dumbbell runs)",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newTCPDumbbellCommand())
	return cmd
}

func newTCPDumbbellCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "dumbbell",
		Short: "Run N bulk TCP flows through one bottleneck on the virtual clock",
		Long: `tcp dumbbell runs N senders -> access links -> router -> one bottleneck link ->
router -> access links -> N receivers on the virtual clock, with the ACKs
coming back the same way. Flows are bulk (iperf-like) and start 100 ms apart;
--cc lists algorithms given to the flows round-robin. RTT is each flow's base
round-trip time (access links RTT/8 each way, the bottleneck RTT/4).

Goodput is a flow's in-order bytes at the receiver over its active time;
utilisation is all flows' goodput over the bottleneck's rate and the run's
duration; jain is Jain's fairness index over the flows' goodputs; events is
how many events the virtual clock fired.

  pseudocong tcp dumbbell --flows 2 --cc newreno --bottleneck 10mbit --rtt 40ms --queue 100 --duration 30s --json
  pseudocong tcp dumbbell --flows 4 --cc cubic,bbr --bottleneck 50mbit --rtt 80ms --queue 333 --qdisc red,ecn --ecn --json`,
		Args: cobra.NoArgs,
		RunE: runTCPDumbbell,
	}
	f := cmd.Flags()
	f.Int("flows", 1, "number of flows (sender/receiver pairs)")
	f.String("cc", "newreno", "congestion control, or a comma-separated list given to flows round-robin (one of "+strings.Join(cc.Names(), ", ")+")")
	f.String("bottleneck", "10mbit", "bottleneck rate in tc units (e.g. 20mbit, 1gbit)")
	f.Duration("rtt", defaultRTT, "base round-trip time of every flow")
	f.Int("queue", 100, "bottleneck queue in packets")
	f.String("qdisc", "droptail", "bottleneck qdisc: droptail, red, red,ecn, or a full netsim spec (red,limit=...,min=...,max=...)")
	f.String("access", "1gbit", "access link rate in tc units")
	f.Duration("duration", defaultDumbbellDuration, "simulated time")
	f.Int("segment", 1448, "payload bytes of a full segment")
	f.String("delack", "on", "delayed ACKs: on or off")
	f.Bool("ecn", false, "endpoints negotiate ECN (RFC 3168); pair with --qdisc red,ecn")
	f.Uint64("seed", 1, "seed of every random choice (RED, initial sequence numbers, BBR's cycle)")
	f.String("profile", tcp.ProfileLinux, "endpoint timer profile: linux, linux-linear, berkeley, ns3")
	f.Bool("json", false, "print one JSON object")
	f.String("trace-csv", "", "write per-flow time series (cwnd, ssthresh, srtt, rto, in flight, delivered, retransmissions) to this CSV file")
	f.String("trace-png", "", "write a cwnd-over-time plot to this PNG file")
	f.Duration("trace-every", defaultTraceEvery, "sampling interval of the traces")
	addCommonFlags(cmd)
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	return cmd
}

const (
	defaultRTT              = 40_000_000     // 40ms
	defaultDumbbellDuration = 30_000_000_000 // 30s
	defaultTraceEvery       = 10_000_000     // 10ms
)

func runTCPDumbbell(cmd *cobra.Command, _ []string) error {
	v, _, err := setupCommand(cmd)
	if err != nil {
		return err
	}
	bneck, err := netsim.ParseRate(v.GetString("bottleneck"))
	if err != nil {
		return usageErrorf("--bottleneck: %w", err)
	}
	access, err := netsim.ParseRate(v.GetString("access"))
	if err != nil {
		return usageErrorf("--access: %w", err)
	}
	var algos []string
	for _, a := range strings.Split(v.GetString("cc"), ",") {
		a = strings.TrimSpace(a)
		if _, err := cc.New(a); err != nil {
			return usageErrorf("--cc: %w", err)
		}
		algos = append(algos, a)
	}
	var delack bool
	switch v.GetString("delack") {
	case "on":
		delack = true
	case "off":
	default:
		return usageErrorf("--delack %q: want on or off", v.GetString("delack"))
	}
	prof, err := tcp.ProfileByName(v.GetString("profile"))
	if err != nil {
		return usageErrorf("--profile: %w", err)
	}
	c := dumbbell.Config{
		Flows: v.GetInt("flows"), CC: algos, Bottleneck: bneck, RTT: v.GetDuration("rtt"),
		Queue: v.GetInt("queue"), Qdisc: v.GetString("qdisc"), Access: access,
		Duration: v.GetDuration("duration"), Segment: v.GetInt("segment"), DelAck: delack,
		ECN: v.GetBool("ecn"), Seed: v.GetUint64("seed"), Profile: prof,
	}
	csvPath, pngPath := v.GetString("trace-csv"), v.GetString("trace-png")
	if csvPath != "" || pngPath != "" {
		c.TraceEvery = v.GetDuration("trace-every")
		if c.TraceEvery <= 0 {
			return usageErrorf("--trace-every must be positive")
		}
	}
	switch {
	case c.Flows < 1:
		return usageErrorf("--flows %d: want at least 1", c.Flows)
	case c.RTT <= 0:
		return usageErrorf("--rtt %v: want a positive duration", c.RTT)
	case c.Queue < 1:
		return usageErrorf("--queue %d: want at least 1 packet", c.Queue)
	case c.Duration <= 0:
		return usageErrorf("--duration %v: want a positive duration", c.Duration)
	case c.Segment < 1 || c.Segment > 9000:
		return usageErrorf("--segment %d: want 1..9000 bytes", c.Segment)
	}
	if _, err := netsim.ParseQdisc(c.QdiscSpecWithDefaults()); err != nil {
		return usageErrorf("--qdisc: %w", err)
	}
	res, err := dumbbell.Run(c)
	if err != nil {
		return err
	}
	if csvPath != "" {
		if err := writeFile(csvPath, func(f *os.File) error { return tcp.WriteCSV(f, res.Traces) }); err != nil {
			return err
		}
	}
	if pngPath != "" {
		p, err := tcp.PlotSeries("congestion window", "cwnd (segments)", res.Traces, func(s tcp.Sample) float64 { return float64(s.Cwnd) })
		if err != nil {
			return err
		}
		if err := writeFile(pngPath, func(f *os.File) error { return tcp.WritePNG(f, p) }); err != nil {
			return err
		}
	}
	out := cmd.OutOrStdout()
	if v.GetBool("json") {
		enc := json.NewEncoder(out)
		return enc.Encode(res)
	}
	fmt.Fprintf(out, "%-4s %-10s %12s %12s %9s\n", "flow", "cc", "goodput_mbps", "retransmits", "timeouts")
	for i, f := range res.Flows {
		fmt.Fprintf(out, "%-4d %-10s %12.3f %12d %9d\n", i, f.CC, f.GoodputMbps, f.Retransmits, f.Timeouts)
	}
	fmt.Fprintf(out, "utilisation %.4f  jain %.4f  events %d  wall %.3fs\n", res.Utilisation, res.Jain, res.Events, res.WallS)
	return nil
}

func writeFile(path string, write func(*os.File) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}
