package main

import (
	"github.com/spf13/cobra"

	"github.com/pseudocong/pseudocong/controller/loadgen"
)

// newBenchCommand is `pseudocong bench`: load generators.
func newBenchCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Benchmark tools (controller load generator)",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newBenchControllerCommand())
	return cmd
}

func newBenchControllerCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "controller",
		Short: "cbench-style load generator for an OpenFlow 1.0 controller",
		Long: `bench controller emulates --switches OpenFlow 1.0 switches, each with --macs
hosts, against a controller, like OFLOPS cbench: the switches answer the
handshake, announce their hosts with gratuitous ARPs, then send PACKET_INs
of new TCP flows and count the responses (FLOW_MOD ADD/MODIFY_STRICT and
non-LLDP PACKET_OUT). Every loop prints cbench's line

  16  switches: flows/sec:  24522 24389 ...  total = 390.514084 per ms

and the end cbench's RESULT line with min/max/avg/stdev responses/s over
the loops after --warmup.

  throughput  every switch keeps its connection full of PACKET_INs
  latency     one PACKET_IN outstanding per switch

  pseudocong bench controller --controller tcp:127.0.0.1:6653 --switches 16 --macs 1000 --loops 10 --duration 10s`,
		Args: cobra.NoArgs,
		RunE: runBenchController,
	}
	f := cmd.Flags()
	f.String("controller", "tcp:127.0.0.1:6653", "controller to connect to (tcp:HOST[:PORT], unix:PATH or HOST:PORT)")
	f.Int("switches", 16, "number of emulated switches")
	f.Int("macs", 1000, "hosts (MAC addresses) behind each switch")
	f.Int("ports", 4, "ports per emulated switch (at least 2)")
	f.String("mode", "throughput", "throughput or latency")
	f.Duration("duration", loadgen.DefaultDuration, "length of one loop")
	f.Int("loops", 10, "number of measured loops")
	f.Int("warmup", 1, "loops run first and left out of the result")
	f.Uint64("first-dpid", 1, "datapath id of the first emulated switch")
	f.Duration("setup-timeout", loadgen.DefaultSetupTimeout, "bound on connecting, handshake and the ARP phase")
	addCommonFlags(cmd)
	return cmd
}

func runBenchController(cmd *cobra.Command, _ []string) error {
	v, log, err := setupCommand(cmd)
	if err != nil {
		return err
	}
	mode, err := loadgen.ParseMode(v.GetString("mode"))
	if err != nil {
		return usageErrorf("--mode: %w", err)
	}
	switches, macs, ports, loops := v.GetInt("switches"), v.GetInt("macs"), v.GetInt("ports"), v.GetInt("loops")
	switch {
	case switches < 1:
		return usageErrorf("--switches %d: want at least 1", switches)
	case macs < 2:
		return usageErrorf("--macs %d: want at least 2", macs)
	case ports < 2:
		return usageErrorf("--ports %d: want at least 2", ports)
	case loops < 1:
		return usageErrorf("--loops %d: want at least 1", loops)
	case v.GetDuration("duration") <= 0:
		return usageErrorf("--duration must be positive")
	}
	warmup := v.GetInt("warmup")
	if warmup == 0 {
		warmup = -1 // Config: 0 = default (1), negative = none
	}
	_, err = loadgen.Run(cmd.Context(), loadgen.Config{
		Controller:   v.GetString("controller"),
		Switches:     switches,
		MACs:         macs,
		Ports:        ports,
		Mode:         mode,
		Duration:     v.GetDuration("duration"),
		Loops:        loops,
		Warmup:       warmup,
		FirstDPID:    v.GetUint64("first-dpid"),
		SetupTimeout: v.GetDuration("setup-timeout"),
		Out:          cmd.OutOrStdout(),
		Logger:       log,
	})
	return err
}
