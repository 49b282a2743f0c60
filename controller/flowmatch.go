package controller

import "github.com/pseudocong/pseudocong/openflow"

// FlowMatch is the match the reactive app installs for frame entering on
// inPort (flowMatch: in_port, MACs, dl_type and, for IPv4, addresses,
// protocol and ports). Exported so that the simulator can preload the very
// rules the app would have installed, instead of a hand copy of the rule.
func FlowMatch(frame []byte, inPort uint16) (openflow.Match, bool) { return flowMatch(frame, inPort) }
