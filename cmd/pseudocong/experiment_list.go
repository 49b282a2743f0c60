package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pseudocong/pseudocong/experiments"
	"github.com/pseudocong/pseudocong/experiments/highbdp"
	"github.com/pseudocong/pseudocong/experiments/mptcpgrid"
	"github.com/pseudocong/pseudocong/experiments/policing"
	"github.com/pseudocong/pseudocong/experiments/vccgrid"
)

func newExperimentListCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List every built-in spec, the command that runs it and its experiments",
		Long: `List every spec built into the binary: each one's name and description,
the command that runs it (most run with "experiment run NAME"; paper 003's
policing, paper 004's mptcp and paper 001's vcc have schemas and commands
of their own) and its grid.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return listSpecs(cmd.OutOrStdout()) },
	}
}

// listSpecs prints every built-in spec: a "NAME: DESCRIPTION" line, a
// "  command: ..." line and the grid's lines.
func listSpecs(w io.Writer) error {
	for _, name := range experiments.BuiltinSpecNames() {
		spec, err := experiments.LoadSpec(name)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%s: %s\n", spec.Name, spec.Description)
		fmt.Fprintf(w, "  command: pseudocong experiment run %s\n", name)
		for _, e := range spec.Runs {
			fmt.Fprintf(w, "  %-10s %-24s %s; %d flows; rates %v pps; base loads %v; priorities %v\n",
				e.ID, e.Paper, e.Kind, e.Flows, e.Rates, e.BaseLoads, e.Priorities)
		}
	}
	if err := listTCPSpecs(w); err != nil {
		return err
	}
	for _, name := range []string{highbdp.SpecName, highbdp.SpecNameCI, highbdp.SpecName20} {
		s, err := highbdp.LoadSpec(name)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%s: %s\n", s.Name, s.Description)
		fmt.Fprintf(w, "  command: pseudocong experiment run %s\n", name)
		fmt.Fprintf(w, "  %d cells: bottlenecks %v × %v × seeds %v, runs of %v (scale 1/%g of %v); buffer sweep %v BDP\n",
			len(s.Cells()), s.Bottlenecks, s.Algorithms, s.Seeds, time.Duration(float64(s.Duration)/s.Scale), s.Scale, s.Duration, s.BufferSweep)
	}
	ps, err := policing.LoadSpec("")
	if err != nil {
		return err
	}
	var modes []string
	for _, m := range ps.Modes {
		modes = append(modes, m.Name)
	}
	fmt.Fprintf(w, "policing: Paper 003: policing vs shaping at an SD-WAN CPE, CUBIC vs BBR (sim or live)\n")
	fmt.Fprintf(w, "  command: pseudocong policing --backend sim (or live: root and iperf3)\n")
	fmt.Fprintf(w, "  %d cells: cubic, bbr, bbr_client × modes %s × up, down × servers %v (the first by default; --all-servers) on topology %s, %v each; e2e check in mode %s\n",
		len(ps.Cells()), strings.Join(modes, ", "), ps.Servers, ps.Topology, ps.Duration.D(), ps.E2E.Mode)
	ms, err := mptcpgrid.Load("mptcp")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s: %s\n", ms.Name, ms.Description)
	fmt.Fprintf(w, "  command: pseudocong mptcp grid --spec %s (--reduced: the tests' grid)\n", ms.Name)
	fmt.Fprintf(w, "  %d cells × %d seeds: policies %v × delays %v ms × subflow-2 loss %v %% × buffers %v KB, %v each\n",
		len(ms.Cells()), ms.Seeds, ms.Policies, ms.Delays, ms.Loss2, ms.BuffersKB, ms.Duration)
	vs, err := vccgrid.Load("vcc")
	if err != nil {
		return err
	}
	perExp := map[string]int{}
	for _, c := range vs.Cells() {
		perExp[c.Exp]++
	}
	fmt.Fprintf(w, "%s: %s\n", vs.Name, vs.Description)
	fmt.Fprintf(w, "  command: pseudocong vcc grid --spec %s (--reduced: the tests' grid)\n", vs.Name)
	fmt.Fprintf(w, "  %d cells × without, with vCC × %d seeds: (a) %d, (b) %d, (c) %d, (d) %d cells, %v each\n",
		len(vs.Cells()), vs.Seeds, perExp["a"], perExp["b"], perExp["c"], perExp["d"], vs.Duration)
	return nil
}
