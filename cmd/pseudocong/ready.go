package main

import (
	"net"

	"github.com/pseudocong/pseudocong/internal/ready"
	"github.com/spf13/cobra"
	"github.com/spf13/viper"
)

// addReadyFlag adds --ready-fd to a serving command: the way a parent (the
// live backend, a test, a shell script) learns the addresses a process
// bound, port 0 included, once it serves. See internal/ready.
func addReadyFlag(cmd *cobra.Command) {
	cmd.Flags().Int("ready-fd", 0, "once listening, write the bound addresses as one JSON line to this inherited file descriptor and close it (0: off), e.g. --ready-fd 3 3>addrs.json")
}

// reportReady writes the report --ready-fd asks for.
func reportReady(v *viper.Viper, r ready.Report) error {
	if err := ready.Write(v.GetInt("ready-fd"), r); err != nil {
		return usageErrorf("%w", err)
	}
	return nil
}

func addrString(a net.Addr) string {
	if a == nil {
		return ""
	}
	return a.String()
}
