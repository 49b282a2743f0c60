package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"github.com/pseudocong/pseudocong/testbed"
)

// newTestbedCommand is `pseudocong testbed up|down|status`: the namespace
// hosts and veth pairs of a live run on one Linux host.
func newTestbedCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "testbed",
		Short: "Create, inspect or remove the live testbed (network namespaces and veth pairs)",
		Long: `The live testbed puts each probe host in its own network namespace
<name>-h<N> with eth0 = 10.0.0.N/24 (MAC 02:70:63:00:00:NN, IPv6 off, TX
checksum offload off) and joins it by a veth pair to the root namespace,
where the other end <name>-s<N> is a port for the switch:

  pseudocong testbed up --hosts 2
  pseudocong switch --port pc-s1 --port pc-s2 ...
  ip netns exec pc-h1 ping 10.0.0.2

With --topo chain:K, up also runs K switch processes in a chain (switch
i's port 2 joined to switch i+1's port 1 by the veth pair <name>-l<i>a /
<name>-l<i>b, datapath ids 1..K), host 1 on switch 1 and host 2 on switch
K, and one reactive controller, in the foreground until interrupted; then
it stops them and removes the testbed:

  pseudocong testbed up --topo chain:3
  ip netns exec pc-h1 ping 10.0.0.2      (through all three switches)

Needs root. up is idempotent; down removes everything with the prefix.`,
	}
	cmd.AddCommand(newTestbedUpCommand(), newTestbedDownCommand(), newTestbedStatusCommand())
	return cmd
}

func addTestbedFlags(cmd *cobra.Command) {
	addCommonFlags(cmd)
	cmd.Flags().String("name", testbed.DefaultName, "testbed name: prefix of every namespace and interface (letters and digits, at most 10)")
	cmd.Flags().String("state-dir", testbed.DefaultStateDir, "directory for the state file <name>.json")
}

func newTestbedUpCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Create (or repair) the testbed",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v, err := testbedViper(cmd)
			if err != nil {
				return err
			}
			hosts := v.GetInt("hosts")
			if hosts < 1 || hosts > testbed.MaxHosts {
				return usageErrorf("--hosts %d: want 1..%d", hosts, testbed.MaxHosts)
			}
			chain, err := parseTopo(v.GetString("topo"))
			if err != nil {
				return err
			}
			cfg := testbed.Config{Name: v.GetString("name"), Hosts: hosts, StateDir: v.GetString("state-dir"), Chain: chain}
			if chain > 0 {
				if hosts != 2 {
					return usageErrorf("--topo chain:%d has two hosts, one at each end: drop --hosts %d", chain, hosts)
				}
				log, err := newLogger(v)
				if err != nil {
					return err
				}
				return runChain(cmd.Context(), v, cfg, cmd.OutOrStdout(), log)
			}
			topo, err := testbed.Up(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			if v.GetBool("json") {
				return printJSONTo(cmd, topo)
			}
			for _, h := range topo.Hosts {
				fmt.Fprintf(cmd.OutOrStdout(), "host %d: netns %s %s %s %s  switch port %s\n",
					h.Index, h.Netns, h.Iface, h.Addr, h.MAC, h.SwitchPort)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "switch ports: --port %s\n", strings.Join(topo.SwitchPorts(), " --port "))
			return nil
		},
	}
	addTestbedFlags(cmd)
	cmd.Flags().Int("hosts", 2, "number of namespace hosts (1..254)")
	cmd.Flags().Bool("json", false, "print the topology as JSON")
	cmd.Flags().String("topo", "", "chain:K: also run K switches in a chain and a reactive controller, in the foreground (see above); empty: hosts and veths only")
	addReadyFlag(cmd)
	return cmd
}

func newTestbedDownCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "down",
		Short: "Remove every namespace, veth pair and state file of the testbed",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v, err := testbedViper(cmd)
			if err != nil {
				return err
			}
			return testbed.Down(v.GetString("name"), testbed.DownOptions{StateDir: v.GetString("state-dir")})
		},
	}
	addTestbedFlags(cmd)
	return cmd
}

func newTestbedStatusCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the testbed as found on this host; exit 1 if missing or unhealthy",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v, err := testbedViper(cmd)
			if err != nil {
				return err
			}
			st, err := testbed.GetStatus(v.GetString("name"))
			if err != nil {
				return err
			}
			if v.GetBool("json") {
				if err := printJSONTo(cmd, st); err != nil {
					return err
				}
			} else {
				printStatus(cmd, st)
			}
			if len(st.Hosts) == 0 {
				return fmt.Errorf("testbed %s does not exist", st.Name)
			}
			if !st.Healthy() {
				return fmt.Errorf("testbed %s is not healthy (run testbed up to repair)", st.Name)
			}
			return nil
		},
	}
	addTestbedFlags(cmd)
	cmd.Flags().Bool("json", false, "print the status as JSON")
	return cmd
}

func printStatus(cmd *cobra.Command, st *testbed.Status) {
	for _, h := range st.Hosts {
		state := "ok"
		if len(h.Problems) > 0 {
			state = strings.Join(h.Problems, "; ")
		}
		fmt.Fprintf(cmd.OutOrStdout(), "host %d: netns %s %s %s  switch port %s (%s): %s\n",
			h.Index, h.Netns, h.Iface, h.Addr, h.SwitchPort, h.SwitchPortOper, state)
	}
}

func printJSONTo(cmd *cobra.Command, v any) error {
	enc := json.NewEncoder(cmd.OutOrStdout())
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// testbedViper is the configuration of a testbed subcommand, with its
// --name checked.
func testbedViper(cmd *cobra.Command) (*viper.Viper, error) {
	v, err := newViper(cmd)
	if err != nil {
		return nil, err
	}
	if err := testbed.ValidateName(v.GetString("name")); err != nil {
		return nil, usageErrorf("%w", err)
	}
	return v, nil
}
