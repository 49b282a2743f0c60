package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pseudocong/pseudocong/experiments/mitlive"
)

// newMitigationsCommand is `pseudocong mitigations`: the mitigations'
// live confirmation (the simulated grid is `experiment run mitigations`).
func newMitigationsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mitigations",
		Short: "Mitigations of pseudo-congestion measured with real Linux TCP (live)",
		Long: `mitigations groups the live side of docs/mitigations.md; the simulated grid
is "pseudocong experiment run mitigations".`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newMitigationsLiveCommand())
	return cmd
}

func newMitigationsLiveCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "live",
		Short: "Compare mitigations live: kernel SYN retransmissions, handshake p50/p99, data RTOs",
		Long: `live runs live-check's kernel connect() cell once per variant: --flows connects
at --rate per second from host 1 to host 2 (network namespaces) through a
"pseudocong switch" with the --profile model on --base-load rules, the
reactive controller numbering rules in --priority order; each connection
echoes --exchange bytes after its handshake. Around every run it reads the
client's and server's kernel counters (nstat TcpExtTCPSynRetrans,
TcpExtTCPTimeouts) and reports SYN retransmissions, handshake p50/p99, data
RTOs and the cut against the first variant, median (min-max) over --rounds
fresh testbeds. Needs root.

A variant is a "+"-joined set of tokens (or "baseline"):
  TCAM layout        highest-first, lowest-first, gap-K, ruletris, fastrule, hermes
  Packet-In policy   install_first, fifo, per_port_fair, syn_first, rate_limited
  controller         descending (rule priorities), cover_rules (one wildcard rule
                     per ingress port pushed with the base load: no Packet-Ins)
  Linux, client      tcp_<knob>=V sets net.ipv4.tcp_<knob> in host 1's namespace
                     (e.g. tcp_frto=0, tcp_syn_linear_timeouts=0); rto_min=DUR
                     sets a per-route rto_min on host 1's route (whole ms)

  pseudocong mitigations live --out /tmp/mitlive
  pseudocong mitigations live --variants baseline,lowest-first+syn_first+cover_rules --rounds 5

It writes mitigations-live.md and mitigations-live.json to --out and prints
the table. Nothing outside the namespaces it creates is changed.`,
		Args: cobra.NoArgs,
		RunE: runMitigationsLive,
	}
	f := cmd.Flags()
	f.StringSlice("variants", mitlive.DefaultVariants, "variants to compare, comma-separated or repeated; the first is the reference of the cuts")
	f.String("profile", mitlive.DefaultProfile, "base switch profile (built-in name or YAML path) the variants change")
	f.Int("flows", mitlive.DefaultFlows, "connects per run")
	f.Float64("rate", mitlive.DefaultRate, "connects per second")
	f.Int("base-load", mitlive.DefaultBaseLoad, "base rules in the TCAM before the connects")
	f.String("priority", mitlive.DefaultPriority, "reactive controller's priority pattern: ascending, descending or constant")
	f.Int("exchange", mitlive.DefaultExchange, "bytes each connection sends and gets echoed after its handshake (negative: none)")
	f.Int("rounds", mitlive.DefaultRounds, "rounds, each on a fresh testbed (variant order rotated by one per round)")
	f.Duration("connect-timeout", 0, "bound on each connect (0: 60 s)")
	f.String("testbed", "", "testbed name prefix, at most 8 characters (round r uses NAME followed by r; after a SIGKILL: pseudocong testbed down --name NAMEr); empty: random")
	f.String("out", "", "directory for mitigations-live.md and mitigations-live.json (empty: print only)")
	f.Bool("json", false, "print the JSON document instead of the markdown table")
	f.Bool("quiet", false, "no progress lines")
	addCommonFlags(cmd)
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	return cmd
}

func runMitigationsLive(cmd *cobra.Command, _ []string) error {
	v, log, err := setupCommand(cmd)
	if err != nil {
		return err
	}
	var variants []string
	for _, s := range v.GetStringSlice("variants") {
		for _, n := range strings.Split(s, ",") {
			if n = strings.TrimSpace(n); n != "" {
				variants = append(variants, n)
			}
		}
	}
	for _, n := range variants {
		if _, err := mitlive.ParseVariant(n); err != nil {
			return usageErrorf("--variants: %w", err)
		}
	}
	cfg := mitlive.Config{
		Profile: v.GetString("profile"), Variants: variants,
		Flows: v.GetInt("flows"), Rate: v.GetFloat64("rate"), BaseLoad: v.GetInt("base-load"),
		Priority: v.GetString("priority"), Exchange: v.GetInt("exchange"), Rounds: v.GetInt("rounds"),
		ConnectTimeout: v.GetDuration("connect-timeout"), Testbed: v.GetString("testbed"), Logger: log,
	}
	if len(cfg.Testbed) > 8 {
		return usageErrorf("--testbed %q: at most 8 characters (interface names are NAME plus a round digit and -sN, 15 at most)", cfg.Testbed)
	}
	if cfg.Flows < 1 || !(cfg.Rate > 0) || cfg.BaseLoad < 0 || cfg.Rounds < 1 || cfg.Exchange == 0 {
		return usageErrorf("--flows %d, --rate %v, --rounds %d must be positive, --base-load %d not negative, --exchange %d not 0 (negative: none)",
			cfg.Flows, cfg.Rate, cfg.Rounds, cfg.BaseLoad, cfg.Exchange)
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("mitigations live needs root (network namespaces, veths, AF_PACKET sockets)")
	}
	stderr := cmd.ErrOrStderr()
	if !v.GetBool("quiet") {
		cfg.Progress = func(done, total int, label string) { fmt.Fprintf(stderr, "[%d/%d] %s\n", done, total, label) }
	}
	res, err := mitlive.Run(cmd.Context(), cfg)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if dir := v.GetString("out"); dir != "" {
		files, err := res.Write(dir)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "wrote %s\n", strings.Join(files, ", "))
	}
	if v.GetBool("json") {
		b, err := res.JSON()
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(out, "%s\n", b)
		return err
	}
	_, err = fmt.Fprint(out, res.Markdown())
	return err
}
