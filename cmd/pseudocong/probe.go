package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"github.com/pseudocong/pseudocong/internal/metricsserver"
	"github.com/pseudocong/pseudocong/probes"
	"github.com/pseudocong/pseudocong/probes/live"
	"github.com/pseudocong/pseudocong/probes/probemetrics"
)

// newProbeCommand is `pseudocong probe syn|data|tcp|respond|listen`: the
// live probes on real hosts (network namespaces of `testbed up`).
func newProbeCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "probe",
		Short: "Measure SYN / data RTTs on real hosts (raw frames or real TCP connects)",
		Long: `Raw-frame probes (the paper's libnet/libpcap method): run a responder on one
host and a prober on the other. They use probe addresses the hosts do not own
(default 10.0.1.1 -> 10.0.1.2:80) so the host kernels stay silent, and answer
ARP for them themselves:

  pseudocong probe respond --netns pc-h2 --pcap resp.pcap
  pseudocong probe syn --netns pc-h1 --count 250 --rate 100 --timers berkeley --json out.json

Real TCP: a listener on one host and connect() calls from the other, reading
SYN retransmissions from TCP_INFO:

  pseudocong probe listen --netns pc-h2 --addr 10.0.0.2:8080
  pseudocong probe tcp --netns pc-h1 --dst 10.0.0.2:8080 --count 100 --rate 10`,
	}
	cmd.AddCommand(
		newRawProbeCommand(probes.KindSYN),
		newRawProbeCommand(probes.KindData),
		newTCPProbeCommand(),
		newRespondCommand(),
		newListenCommand(),
	)
	return cmd
}

// addProbeHostFlags: where the probe runs.
func addProbeHostFlags(cmd *cobra.Command) {
	addCommonFlags(cmd)
	cmd.Flags().String("netns", "", "network namespace to run in (empty: the current one)")
	cmd.Flags().String("iface", "eth0", "interface for raw frames")
	cmd.Flags().Int("tpacket-version", 0, "AF_PACKET ring version, 2 or 3 (0: 2, which adds no latency)")
}

func addProbeRunFlags(cmd *cobra.Command, defaultTimers string) {
	cmd.Flags().Int("count", 250, "number of probes (flows)")
	cmd.Flags().Float64("rate", 10, "probes per second")
	cmd.Flags().String("timers", defaultTimers, "timer profile for the RTT bins: berkeley, linux, or a name from --profiles")
	cmd.Flags().String("profiles", "", "YAML file with extra timer profiles")
	cmd.Flags().String("metrics-addr", "", "serve Prometheus /metrics (RTT histogram) here, e.g. 127.0.0.1:9103")
	cmd.Flags().Duration("linger", 0, "keep serving /metrics this long after the run (so Prometheus scrapes the result)")
	cmd.Flags().String("json", "", "write the full report as JSON to this file (- for stdout)")
}

// probeProfiles resolves --timers and returns every profile for the
// histogram buckets.
func probeProfiles(v *viper.Viper) (probes.TimerProfile, []probes.TimerProfile, error) {
	var extra []probes.TimerProfile
	if path := v.GetString("profiles"); path != "" {
		var err error
		if extra, err = probes.LoadProfilesFile(path); err != nil {
			return probes.TimerProfile{}, nil, usageErrorf("--profiles: %w", err)
		}
	}
	prof, err := probes.ProfileByName(v.GetString("timers"), extra...)
	if err != nil {
		return probes.TimerProfile{}, nil, usageErrorf("--timers: %w", err)
	}
	return prof, append(probes.BuiltinProfiles(), extra...), nil
}

// serveProbeMetrics starts the metrics server when --metrics-addr is set
// and returns its registry (nil without it).
func serveProbeMetrics(ctx context.Context, v *viper.Viper, log *slog.Logger) (*prometheus.Registry, error) {
	addr := v.GetString("metrics-addr")
	if addr == "" {
		return nil, nil
	}
	reg := metricsserver.NewRegistry()
	if _, err := metricsserver.Serve(ctx, addr, reg, log); err != nil {
		return nil, err
	}
	return reg, nil
}

// probeMetrics starts the metrics server when --metrics-addr is set and
// returns the RTT observer (nil without it) and a function that lingers.
func probeMetrics(ctx context.Context, v *viper.Viper, log *slog.Logger, profiles []probes.TimerProfile) (probes.Observer, func(), error) {
	reg, err := serveProbeMetrics(ctx, v, log)
	if err != nil || reg == nil {
		return nil, func() {}, err
	}
	obs, err := probemetrics.New(reg, profiles...)
	if err != nil {
		return nil, nil, err
	}
	linger := func() {
		d := v.GetDuration("linger")
		if d <= 0 {
			return
		}
		log.Info("run finished; still serving metrics", "for", d)
		select {
		case <-time.After(d):
		case <-ctx.Done():
		}
	}
	return obs, linger, nil
}

func writeReport(cmd *cobra.Command, path string, rep any) error {
	if path == "" {
		return nil
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if path == "-" {
		_, err = cmd.OutOrStdout().Write(b)
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

func printReport(cmd *cobra.Command, rep *live.Report) {
	s := rep.Summary
	fmt.Fprintf(cmd.OutOrStdout(), "%s probes: %d sent, %d answered, %d unanswered (complete=%v, %.1f s)\n",
		rep.Kind, rep.Count, s.Answered, s.Unanswered, rep.Complete, rep.DurationS)
	fmt.Fprintf(cmd.OutOrStdout(), "RTT min %s  median %s  p90 %s  p99 %s  max %s\n",
		secs(s.MinS), secs(s.MedianS), secs(s.P90S), secs(s.P99S), secs(s.MaxS))
	fmt.Fprintf(cmd.OutOrStdout(), "%s timer bins:", rep.Profile)
	for _, b := range rep.Bins {
		fmt.Fprintf(cmd.OutOrStdout(), "  %s %.1f%%", b.Label, 100*b.Share)
	}
	fmt.Fprintln(cmd.OutOrStdout())
	if rep.ProfileMismatches != nil {
		fmt.Fprintf(cmd.OutOrStdout(), "kernel SYN retransmissions differing from the profile's prediction: %d\n", *rep.ProfileMismatches)
	}
}

func secs(s float64) string { return time.Duration(s * float64(time.Second)).String() }

func parseAddrFlag(v *viper.Viper, key string) (netip.Addr, error) {
	s := v.GetString(key)
	if s == "" {
		return netip.Addr{}, nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is4() {
		return netip.Addr{}, usageErrorf("--%s %q: want an IPv4 address", key, s)
	}
	return a, nil
}

func newRawProbeCommand(kind probes.Kind) *cobra.Command {
	cmd := &cobra.Command{
		Use:   kind.String(),
		Short: fmt.Sprintf("Send %s probes as raw frames and measure their RTT (needs `probe respond` on the far host)", kind),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v, log, err := setupCommand(cmd)
			if err != nil {
				return err
			}
			prof, all, err := probeProfiles(v)
			if err != nil {
				return err
			}
			src, err := parseAddrFlag(v, "src")
			if err != nil {
				return err
			}
			dst, err := parseAddrFlag(v, "dst")
			if err != nil {
				return err
			}
			var dstMAC net.HardwareAddr
			if s := v.GetString("dst-mac"); s != "" {
				if dstMAC, err = net.ParseMAC(s); err != nil {
					return usageErrorf("--dst-mac: %w", err)
				}
			}
			if v.GetInt("count") <= 0 || v.GetFloat64("rate") <= 0 {
				return usageErrorf("--count and --rate must be positive")
			}
			ctx := cmd.Context()
			obs, linger, err := probeMetrics(ctx, v, log, all)
			if err != nil {
				return err
			}
			var capture *live.Capture
			if path := v.GetString("pcap"); path != "" {
				if capture, err = live.CreateCapture(path); err != nil {
					return err
				}
				defer capture.Close()
			}
			rep, _, err := live.RunProbe(ctx, live.ProbeConfig{
				Kind: kind, Netns: v.GetString("netns"), Iface: v.GetString("iface"),
				Src: src, Dst: dst, DstPort: uint16(v.GetUint("dst-port")), DstMAC: dstMAC,
				Count: v.GetInt("count"), Rate: v.GetFloat64("rate"), Seed: v.GetUint64("seed"),
				Profile: prof, Retransmit: v.GetBool("retransmit"), Timeout: v.GetDuration("timeout"),
				PayloadLen: v.GetInt("payload"), Observer: obs, Capture: capture,
				TPacketVersion: v.GetInt("tpacket-version"), Logger: log,
			})
			if err != nil {
				return err
			}
			if capture != nil {
				if err := capture.Close(); err != nil {
					return err
				}
			}
			printReport(cmd, rep)
			if err := writeReport(cmd, v.GetString("json"), rep); err != nil {
				return err
			}
			linger()
			return nil
		},
	}
	addProbeHostFlags(cmd)
	addProbeRunFlags(cmd, probes.ProfileBerkeley)
	cmd.Flags().String("src", live.DefaultSrc.String(), "probe source address (answered ARP for by the prober; not a host address)")
	cmd.Flags().String("dst", live.DefaultDst.String(), "probe destination address (the responder's --addr)")
	cmd.Flags().Uint("dst-port", live.DefaultDstPort, "probe destination port")
	cmd.Flags().String("dst-mac", "", "responder MAC; skips ARP")
	cmd.Flags().Uint64("seed", 1, "seed for source ports and sequence numbers")
	cmd.Flags().Bool("retransmit", false, "model the stack's retransmissions per --timers (off: each probe sent once, as in the paper)")
	cmd.Flags().Duration("timeout", 0, "how long each probe waits for its reply without --retransmit (0: 200s)")
	cmd.Flags().String("pcap", "", "write every frame sent and received to this pcap file")
	if kind == probes.KindData {
		cmd.Flags().Int("payload", probes.DefaultPayloadLen, "payload bytes per data probe")
	} else {
		cmd.Flags().Int("payload", 0, "ignored for SYN probes")
		_ = cmd.Flags().MarkHidden("payload")
	}
	return cmd
}

func newRespondCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "respond",
		Short: "Answer raw SYN / data probes (SYN-ACK / ACK at once) until interrupted",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v, log, err := setupCommand(cmd)
			if err != nil {
				return err
			}
			var addrs []netip.Addr
			for _, s := range v.GetStringSlice("addr") {
				a, err := netip.ParseAddr(s)
				if err != nil || !a.Is4() {
					return usageErrorf("--addr %q: want an IPv4 address", s)
				}
				addrs = append(addrs, a)
			}
			var capture *live.Capture
			if path := v.GetString("pcap"); path != "" {
				if capture, err = live.CreateCapture(path); err != nil {
					return err
				}
				defer capture.Close()
			}
			reg, err := serveProbeMetrics(cmd.Context(), v, log)
			if err != nil {
				return err
			}
			ready := make(chan struct{})
			go func() {
				<-ready
				log.Info("responder ready", "netns", v.GetString("netns"), "iface", v.GetString("iface"), "addrs", addrs)
			}()
			cfg := live.ResponderConfig{
				Netns: v.GetString("netns"), Iface: v.GetString("iface"), Addrs: addrs,
				Capture: capture, TPacketVersion: v.GetInt("tpacket-version"), Logger: log, Ready: ready,
			}
			if reg != nil {
				cfg.Registerer = reg
			}
			rep, err := live.RunResponder(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			if capture != nil {
				if err := capture.Close(); err != nil {
					return err
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "answered %d SYNs and %d data segments; ignored %d; %d send errors\n",
				rep.Responder.SYNs, rep.Responder.Data, rep.Responder.Ignored, rep.Responder.SendErrors)
			return writeReport(cmd, v.GetString("json"), rep)
		},
	}
	addProbeHostFlags(cmd)
	cmd.Flags().StringSlice("addr", []string{live.DefaultDst.String()}, "probe destination addresses to answer (and answer ARP for)")
	cmd.Flags().String("pcap", "", "write every frame sent and received to this pcap file")
	cmd.Flags().String("json", "", "write the responder's counters as JSON on exit (- for stdout)")
	cmd.Flags().String("metrics-addr", "", "serve Prometheus /metrics (reply counters) here, e.g. 127.0.0.1:9104")
	return cmd
}

func newListenCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "listen",
		Short: "Accept TCP connections (and close them) for `probe tcp`, until interrupted",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v, log, err := setupCommand(cmd)
			if err != nil {
				return err
			}
			addr, err := netip.ParseAddrPort(v.GetString("addr"))
			if err != nil {
				return usageErrorf("--addr: %w", err)
			}
			reg, err := serveProbeMetrics(cmd.Context(), v, log)
			if err != nil {
				return err
			}
			ready := make(chan netip.AddrPort, 1)
			go func() {
				if a, ok := <-ready; ok {
					log.Info("listening", "netns", v.GetString("netns"), "addr", a)
				}
			}()
			cfg := live.TCPListenConfig{Netns: v.GetString("netns"), Addr: addr, Ready: ready, Logger: log}
			if reg != nil {
				cfg.Registerer = reg
			}
			n, err := live.ListenTCP(cmd.Context(), cfg)
			fmt.Fprintf(cmd.OutOrStdout(), "accepted %d connections\n", n)
			return err
		},
	}
	addCommonFlags(cmd)
	cmd.Flags().String("netns", "", "network namespace to listen in (empty: the current one)")
	cmd.Flags().String("addr", "10.0.0.2:8080", "address to listen on")
	cmd.Flags().String("metrics-addr", "", "serve Prometheus /metrics (accepted connections) here, e.g. 127.0.0.1:9104")
	return cmd
}

func newTCPProbeCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tcp",
		Short: "Make real connect() calls and report handshake times and the kernel's SYN retransmissions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v, log, err := setupCommand(cmd)
			if err != nil {
				return err
			}
			prof, all, err := probeProfiles(v)
			if err != nil {
				return err
			}
			dst, err := netip.ParseAddrPort(v.GetString("dst"))
			if err != nil || !dst.Addr().Is4() {
				return usageErrorf("--dst %q: want IPv4:port", v.GetString("dst"))
			}
			if v.GetInt("count") <= 0 || v.GetFloat64("rate") <= 0 {
				return usageErrorf("--count and --rate must be positive")
			}
			ctx := cmd.Context()
			obs, linger, err := probeMetrics(ctx, v, log, all)
			if err != nil {
				return err
			}
			rep, _, err := live.RunTCPProbe(ctx, live.TCPProbeConfig{
				Netns: v.GetString("netns"), Dst: dst, Count: v.GetInt("count"), Rate: v.GetFloat64("rate"),
				Timeout: v.GetDuration("timeout"), Profile: prof, Observer: obs, Logger: log,
			})
			if err != nil {
				return err
			}
			printReport(cmd, rep)
			if err := writeReport(cmd, v.GetString("json"), rep); err != nil {
				return err
			}
			linger()
			return nil
		},
	}
	addCommonFlags(cmd)
	cmd.Flags().String("netns", "", "network namespace to connect from (empty: the current one)")
	addProbeRunFlags(cmd, probes.ProfileLinux)
	cmd.Flags().String("dst", "10.0.0.2:8080", "listener address (probe listen)")
	cmd.Flags().Duration("timeout", live.DefaultConnectTimeout, "per-connect limit (default outlasts Linux's 127 s SYN give-up)")
	return cmd
}
