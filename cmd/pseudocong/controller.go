package main

import (
	"fmt"
	"net"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"github.com/pseudocong/pseudocong/controller"
	"github.com/pseudocong/pseudocong/controller/flowsyntax"
	"github.com/pseudocong/pseudocong/internal/metricsserver"
	"github.com/pseudocong/pseudocong/internal/ready"
	"github.com/pseudocong/pseudocong/openflow"
)

// newControllerCommand is `pseudocong controller`: the OpenFlow 1.0
// controller.
func newControllerCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "controller",
		Short: "Run the OpenFlow 1.0 controller (reactive or proactive)",
		Long: `controller accepts OpenFlow 1.0 switches (many at once) and runs one app:

  reactive   L2 learning plus a per-flow installer, as paper 000's Floodlight:
             each PACKET_IN to a known host becomes a FLOW_MOD for that flow
             (in_port, dl_src, dl_dst, dl_type and, for IPv4, nw_src, nw_dst,
             nw_proto, tp_src, tp_dst) with the --priority strategy, releasing
             the buffered packet (or followed by a PACKET_OUT when unbuffered);
             unknown and broadcast destinations are flooded.
  proactive  pushes the rules of --rules (ovs-ofctl flow syntax, one per line,
             # comments) to every switch that connects, after deleting its
             flows (unless --keep-existing-flows), then a BARRIER. PACKET_INs
             are ignored: add a priority=0 catch-all rule to your file.

  pseudocong controller --listen tcp:127.0.0.1:6653
  pseudocong controller --app proactive --rules rules.txt
  ovs-vsctl set-controller br0 tcp:127.0.0.1:6653

--listen takes tcp:HOST[:PORT] (listen on that address) or the Open vSwitch
passive forms ptcp:PORT[:HOST], pssl:PORT[:HOST] (needs --private-key,
--certificate, --ca-cert), punix:PATH.`,
		Args: cobra.NoArgs,
		RunE: runController,
	}
	addCommonFlags(cmd)
	addReadyFlag(cmd)
	f := cmd.Flags()
	f.String("listen", fmt.Sprintf("tcp:0.0.0.0:%d", openflow.DefaultPort), "address to accept switches on (tcp:HOST[:PORT], ptcp:PORT[:HOST], pssl:PORT[:HOST], punix:PATH)")
	f.String("app", "reactive", "controller app: reactive or proactive")
	f.String("rules", "", "rule file for --app proactive, ovs-ofctl flow syntax (empty: none)")
	f.Bool("keep-existing-flows", false, "proactive: do not delete a switch's flows before pushing the rules")
	f.String("priority", "constant", "reactive flow priorities: constant, ascending (1, 2, ... per switch) or descending (65535, 65534, ...)")
	f.Uint16("constant-priority", controller.DefaultConstantPriority, "priority of reactive flows under --priority constant")
	f.Duration("idle-timeout", controller.DefaultIdleTimeout, "idle timeout of reactive flows (whole seconds; 0 = permanent)")
	f.Duration("hard-timeout", 0, "hard timeout of reactive flows (whole seconds; 0 = none)")
	f.Duration("reorder-window", 0, fmt.Sprintf("hold FLOW_MOD ADDs up to this long and send each burst highest priority first, never across a BARRIER or an overlapping DELETE/MODIFY (Tango, CoNEXT 2014; 0 = off, the default; %v is a typical value)", controller.DefaultReorderWindow))
	f.Int("reorder-limit", controller.DefaultReorderLimit, "most FLOW_MOD ADDs --reorder-window holds; a full buffer is sent at once")
	f.Uint16("miss-send-len", openflow.DefaultMissSendLen, "SET_CONFIG miss_send_len: bytes of a buffered missed packet sent in PACKET_IN")
	f.Duration("echo-interval", controller.DefaultEchoInterval, "send ECHO_REQUEST after this much silence, disconnect after twice it (negative: off)")
	f.Duration("handshake-timeout", controller.DefaultHandshakeTimeout, "close a connection that has not completed HELLO and FEATURES (TLS included) within this")
	f.Int("max-conns", controller.DefaultMaxConns, "most switch connections open at once, handshaking or connected; more are refused (0: no cap)")
	f.Int("max-handshakes-per-peer", controller.DefaultMaxHandshakesPerPeer, "most connections from one source IP still in the handshake; more are refused (0: no cap)")
	f.String("metrics-addr", "", "serve Prometheus metrics on HOST:PORT (empty: off)")
	f.String("private-key", "", "PEM private key for pssl targets")
	f.String("certificate", "", "PEM certificate for pssl targets")
	f.String("ca-cert", "", "PEM CA certificate that switches must be signed by (mutual TLS)")
	return cmd
}

func runController(cmd *cobra.Command, _ []string) error {
	v, log, err := setupCommand(cmd)
	if err != nil {
		return err
	}
	reg := metricsserver.NewRegistry()
	metrics, err := controller.NewMetrics(reg)
	if err != nil {
		return err
	}
	app, err := controllerApp(v, metrics)
	if err != nil {
		return err
	}
	limits, err := connLimits(v)
	if err != nil {
		return err
	}
	reorder, err := reorderConfig(v)
	if err != nil {
		return err
	}
	ln, err := listenSwitches(v)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	var metricsAddr net.Addr
	if addr := v.GetString("metrics-addr"); addr != "" {
		if metricsAddr, err = metricsserver.Serve(ctx, addr, reg, log); err != nil {
			_ = ln.Close()
			return err
		}
	}
	core := controller.NewCore(controller.Config{App: app, Metrics: metrics, Logger: log, Reorder: reorder})
	limits.Core = core
	limits.MissSendLen = uint16(v.GetUint("miss-send-len"))
	limits.EchoInterval = v.GetDuration("echo-interval")
	limits.Logger = log
	srv := controller.NewServer(limits)
	log.Info("controller starting", "listen", ln.Addr().String(), "app", v.GetString("app"))
	if err := reportReady(v, ready.Report{OpenFlow: ln.Addr().String(), Metrics: addrString(metricsAddr)}); err != nil {
		_ = ln.Close()
		return err
	}
	return srv.Serve(ctx, ln)
}

// reorderConfig reads --reorder-window and --reorder-limit.
func reorderConfig(v *viper.Viper) (controller.ReorderConfig, error) {
	cfg := controller.ReorderConfig{Window: v.GetDuration("reorder-window"), Limit: v.GetInt("reorder-limit")}
	if cfg.Window < 0 {
		return cfg, usageErrorf("--reorder-window %v: want 0 (off) or a positive duration", cfg.Window)
	}
	if cfg.Limit < 1 {
		return cfg, usageErrorf("--reorder-limit %d: want 1 or more", cfg.Limit)
	}
	return cfg, nil
}

// connLimits reads the admission flags into a ServerConfig: the flags say
// 0 for "no cap", ServerConfig says negative (its 0 is "default").
func connLimits(v *viper.Viper) (controller.ServerConfig, error) {
	cfg := controller.ServerConfig{HandshakeTimeout: v.GetDuration("handshake-timeout")}
	if cfg.HandshakeTimeout <= 0 {
		return cfg, usageErrorf("--handshake-timeout %v: want a positive duration", cfg.HandshakeTimeout)
	}
	for _, l := range []struct {
		flag string
		dst  *int
	}{{"max-conns", &cfg.MaxConns}, {"max-handshakes-per-peer", &cfg.MaxHandshakesPerPeer}} {
		n := v.GetInt(l.flag)
		if n < 0 {
			return cfg, usageErrorf("--%s %d: want 0 (no cap) or more", l.flag, n)
		}
		if n == 0 {
			n = -1
		}
		*l.dst = n
	}
	return cfg, nil
}

// controllerApp builds the app the flags ask for.
func controllerApp(v *viper.Viper, metrics *controller.Metrics) (controller.App, error) {
	switch app := v.GetString("app"); app {
	case "reactive":
		if v.GetString("rules") != "" {
			return nil, usageErrorf("--rules is for --app proactive")
		}
		prio, err := controller.ParsePriorityStrategy(v.GetString("priority"))
		if err != nil {
			return nil, usageErrorf("--priority: %w", err)
		}
		idle := v.GetDuration("idle-timeout")
		if idle == 0 {
			idle = -1 // ReactiveConfig: negative = permanent, 0 = default
		}
		return controller.NewReactive(controller.ReactiveConfig{
			Priority:         prio,
			ConstantPriority: uint16(v.GetUint("constant-priority")),
			IdleTimeout:      idle,
			HardTimeout:      v.GetDuration("hard-timeout"),
			Metrics:          metrics,
		}), nil
	case "proactive":
		path := v.GetString("rules")
		if path == "" {
			return nil, usageErrorf("--app proactive needs --rules FILE")
		}
		flows, err := flowsyntax.ParseFile(path)
		if err != nil {
			return nil, usageErrorf("%w", err)
		}
		return controller.NewProactive(controller.ProactiveConfig{
			Flows:        flows,
			KeepExisting: v.GetBool("keep-existing-flows"),
		}), nil
	default:
		return nil, usageErrorf("--app %q: want reactive or proactive", app)
	}
}

// listenSwitches opens --listen. An active target (tcp:HOST:PORT) means
// "listen on HOST:PORT", the form the issue asks for; passive targets are
// passed on as Open vSwitch writes them.
func listenSwitches(v *viper.Viper) (net.Listener, error) {
	target := v.GetString("listen")
	t, err := openflow.ParseTarget(target)
	if err != nil {
		return nil, usageErrorf("--listen: %w", err)
	}
	t.Passive = true
	var tlsCfg *openflow.TLSConfig
	if t.Scheme == "ssl" {
		tlsCfg = &openflow.TLSConfig{
			KeyFile: v.GetString("private-key"), CertFile: v.GetString("certificate"), CAFile: v.GetString("ca-cert"),
		}
		if tlsCfg.KeyFile == "" || tlsCfg.CertFile == "" {
			return nil, usageErrorf("--listen %s needs --private-key and --certificate", target)
		}
	}
	ln, err := openflow.Listen(t.String(), tlsCfg)
	if err != nil {
		return nil, err
	}
	return ln, nil
}
