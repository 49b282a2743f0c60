package main

import (
	"fmt"
	"net"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/internal/metricsserver"
	"github.com/pseudocong/pseudocong/internal/ready"
	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/softswitch"
)

// newSwitchCommand is `pseudocong switch`: the OpenFlow 1.0 software switch.
func newSwitchCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "switch",
		Short: "Run the OpenFlow 1.0 software switch",
		Long: `switch runs the OpenFlow 1.0 software switch. It dials its controller
(--controller, redialled with exponential backoff from 100 ms to 8 s) and
listens for management clients such as ovs-ofctl (--listen, repeatable):

  pseudocong switch --controller tcp:127.0.0.1:6653 --listen ptcp:6634:127.0.0.1
  ovs-ofctl -O OpenFlow10 show tcp:127.0.0.1:6634

Targets use Open vSwitch syntax: tcp:HOST:PORT, ssl:HOST:PORT, unix:PATH to
dial; ptcp:PORT[:HOST], pssl:PORT[:HOST], punix:PATH to listen. ssl targets
need --private-key, --certificate and --ca-cert.

Without a connected controller, --fail-mode secure drops table misses and
standalone forwards them as an L2 learning switch. Ports are in-memory
(--ports N creates ports 1..N) unless --port names Linux interfaces.` + linkEmuHelp + vccHelp,
		Args: cobra.NoArgs,
		RunE: runSwitch,
	}
	addCommonFlags(cmd)
	addReadyFlag(cmd)
	f := cmd.Flags()
	f.String("controller", "", "controller target to dial (tcp:HOST:PORT, ssl:HOST:PORT, unix:PATH); empty: none")
	f.StringArray("listen", nil, "passive target for management clients (ptcp:PORT[:HOST], pssl:..., punix:PATH); repeatable")
	f.Uint64("dpid", 1, "datapath id")
	f.String("profile", "ideal", switchProfileHelp)
	f.String("fail-mode", "secure", "behaviour without a controller: secure (drop misses) or standalone (L2 learning)")
	f.Int("ports", 4, "number of in-memory ports to create (1..N); ignored with --port")
	f.StringArray("port", nil, "Linux interface to use as a port via AF_PACKET (repeatable; numbered 1, 2, ... in order)")
	f.Int("tpacket-version", 0, "AF_PACKET ring version for --port, 2 or 3 (0: 2, which adds no latency)")
	addLinkEmuFlags(f)
	addVCCFlags(f)
	f.Int("buffers", 256, "packet buffers for PACKET_IN (n_buffers); 0 disables buffering")
	f.Int("tcam-capacity", 0, "TCAM entries; overrides the profile's tcam.capacity with the same timings (a scaled-down cache, as paper-tcp's cache cell; 0: the profile's)")
	f.Int("table-size", 0, "flow table capacity, TCAM + backing table; overrides the profile's backing_table.capacity (0: TCAM + the profile's backing table)")
	f.String("metrics-addr", "", "serve Prometheus metrics on HOST:PORT (empty: off)")
	f.String("private-key", "", "PEM private key for ssl/pssl targets")
	f.String("certificate", "", "PEM certificate for ssl/pssl targets")
	f.String("ca-cert", "", "PEM CA certificate that peers must be signed by (mutual TLS)")
	f.Int("max-mgmt-conns", softswitch.DefaultMaxServiceConns, "most management connections (--listen) open at once")
	f.Int("max-mgmt-conns-per-peer", softswitch.DefaultMaxServiceConnsPerPeer, "most management connections from one IP address")
	f.Duration("mgmt-handshake-timeout", softswitch.DefaultServiceHandshakeTimeout, "close a management connection that has not completed HELLO (TLS included) within this")
	f.Duration("mgmt-idle-timeout", softswitch.DefaultServiceIdleTimeout, "close a management connection that sent no whole message for this long; clients stay up by answering echo requests (0: off)")
	f.Int("reply-backlog", softswitch.DefaultReplyBacklog, "bytes of unread replies at which the switch stops reading a connection's requests until the peer reads (0: off, replies beyond the write queue are dropped)")
	return cmd
}

func runSwitch(cmd *cobra.Command, _ []string) error {
	v, log, err := setupCommand(cmd)
	if err != nil {
		return err
	}
	dp, err := loadScaledDataPlane(v.GetString("profile"), v.GetInt("table-size"), v.GetInt("tcam-capacity"))
	if err != nil {
		return err
	}
	failMode, err := softswitch.ParseFailMode(v.GetString("fail-mode"))
	if err != nil {
		return usageErrorf("--fail-mode: %w", err)
	}
	nports := v.GetInt("ports")
	if nports < 0 || nports > int(openflow.PortMax) {
		return usageErrorf("--ports %d: want 0..%d", nports, openflow.PortMax)
	}
	buffers := v.GetInt("buffers")
	if buffers < 0 {
		return usageErrorf("--buffers %d: want >= 0", buffers)
	}
	if buffers == 0 {
		buffers = -1 // Config: negative disables buffering
	}
	dpid := v.GetUint64("dpid")
	controller := v.GetString("controller")
	listen := v.GetStringSlice("listen")
	if controller == "" && len(listen) == 0 {
		return usageErrorf("give --controller and/or --listen: the switch needs at least one OpenFlow connection")
	}
	var tlsCfg *openflow.TLSConfig
	if key, cert, ca := v.GetString("private-key"), v.GetString("certificate"), v.GetString("ca-cert"); key != "" || cert != "" || ca != "" {
		tlsCfg = &openflow.TLSConfig{KeyFile: key, CertFile: cert, CAFile: ca}
	}
	for _, t := range append([]string{controller}, listen...) {
		if (strings.HasPrefix(t, "ssl:") || strings.HasPrefix(t, "pssl:")) && tlsCfg == nil {
			return usageErrorf("target %s needs --private-key and --certificate (and --ca-cert)", t)
		}
	}

	ctx := cmd.Context()
	reg := metricsserver.NewRegistry()
	met, err := softswitch.NewMetrics(reg)
	if err != nil {
		return err
	}
	var metricsAddr net.Addr
	if addr := v.GetString("metrics-addr"); addr != "" {
		if metricsAddr, err = metricsserver.Serve(ctx, addr, reg, log); err != nil {
			return err
		}
	}
	sw := softswitch.New(clock.Wall{}, softswitch.Config{
		DatapathID:    dpid,
		FailMode:      failMode,
		Buffers:       buffers,
		TableCapacity: dp.tableCapacity,
		TieBreak:      dp.tieBreak,
		Logger:        log,
		Metrics:       met,
	})
	defer sw.Close()
	pl, err := dp.attach(sw, reg, log)
	if err != nil {
		return err
	}
	defer pl.Stop()
	emu, err := parseLinkEmu(v, v.GetStringSlice("port"))
	if err != nil {
		return err
	}
	if len(v.GetStringSlice("vcc-port")) > 0 && len(v.GetStringSlice("port")) == 0 {
		return usageErrorf("--vcc-port needs --port interfaces")
	}
	if ifnames := v.GetStringSlice("port"); len(ifnames) > 0 {
		closePorts, err := addLinuxPorts(sw, ifnames, v.GetInt("tpacket-version"), emu, reg, log)
		if err != nil {
			return err
		}
		defer closePorts()
		nports = 0
		if err := setupVCC(v, sw, ifnames, reg, log); err != nil {
			return err
		}
	}
	ports := max(nports, len(v.GetStringSlice("port"))) // for the log line
	for i := 1; i <= nports; i++ {
		no := uint16(i)
		if err := sw.AddPort(softswitch.NewMemPort(no, fmt.Sprintf("mem%d", i), softswitch.MemPortMAC(dpid, no), discardFrame)); err != nil {
			return err
		}
	}
	maxConns, perPeer := v.GetInt("max-mgmt-conns"), v.GetInt("max-mgmt-conns-per-peer")
	if maxConns < 1 || perPeer < 1 {
		return usageErrorf("--max-mgmt-conns %d, --max-mgmt-conns-per-peer %d: want >= 1", maxConns, perPeer)
	}
	hsTimeout := v.GetDuration("mgmt-handshake-timeout")
	if hsTimeout <= 0 {
		return usageErrorf("--mgmt-handshake-timeout %v: want > 0", hsTimeout)
	}
	idle, backlog := v.GetDuration("mgmt-idle-timeout"), v.GetInt("reply-backlog")
	if idle <= 0 {
		idle = -1 // SessionConfig: negative disables
	}
	if backlog <= 0 {
		backlog = -1
	}
	sess, err := softswitch.NewSession(sw, softswitch.SessionConfig{
		Controller:              controller,
		Listen:                  listen,
		TLS:                     tlsCfg,
		MaxServiceConns:         maxConns,
		MaxServiceConnsPerPeer:  perPeer,
		ServiceHandshakeTimeout: hsTimeout,
		ServiceIdleTimeout:      idle,
		Conn:                    openflow.ConnConfig{ReplyBacklog: backlog},
		Logger:                  log,
	})
	if err != nil {
		return usageErrorf("%w", err)
	}
	rep := ready.Report{Metrics: addrString(metricsAddr)}
	for i, a := range sess.ListenAddrs() {
		log.Info("listening for management clients", "target", listen[i], "addr", a.String())
		rep.Listen = append(rep.Listen, a.String())
	}
	if err := reportReady(v, rep); err != nil {
		return err
	}
	log.Info("switch running", "dpid", fmt.Sprintf("%016x", dpid), "controller", controller,
		"fail_mode", failMode.String(), "ports", ports, "profile", dp.profile.Name)
	return sess.Run(ctx)
}

// discardFrame is where in-memory ports send frames until Linux interfaces
// come with the live testbed: the switch still counts them in port stats.
func discardFrame([]byte) {}
