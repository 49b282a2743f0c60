package main

import "github.com/spf13/cobra"

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "pseudocong",
		Short: "Testbed for TCP pseudo-congestion in software-defined networks",
		Long: `pseudocong reproduces, measures and mitigates TCP pseudo-congestion caused by
SDN switches (TCAM re-ordering and a slow local CPU batching Packet-Ins).

Every flag can also be set as PSEUDOCONG_<FLAG> in the environment (dashes
become underscores) or as a key in the file given by --config.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newVersionCommand())
	root.AddCommand(newTestbedCommand())
	root.AddCommand(newProbeCommand())
	root.AddCommand(newSwitchCommand())
	root.AddCommand(newControllerCommand())
	root.AddCommand(newBenchCommand())
	root.AddCommand(newExperimentCommand())
	root.AddCommand(newTCPCommand())
	root.AddCommand(newMPTCPCommand())
	root.AddCommand(newVCCCommand())
	root.AddCommand(newCalibrateCommand())
	root.AddCommand(newPolicingCommand())
	root.AddCommand(newMitigationsCommand())
	return root
}

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Run: func(cmd *cobra.Command, _ []string) {
			cmd.Println("pseudocong (OpenFlow 1.0)")
		},
	}
}
