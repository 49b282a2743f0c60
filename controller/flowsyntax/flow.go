// Package flowsyntax reads and writes OpenFlow 1.0 flows in ovs-ofctl flow
// syntax, so that rule files for the proactive controller app look exactly
// like the arguments of `ovs-ofctl add-flow`. For example:
//
//	priority=100,tcp,nw_dst=10.0.0.2,tp_dst=80,actions=output:2
//
// Only what OpenFlow 1.0 can express is
// accepted (no masks on Ethernet addresses, no NXM fields, table 0 only).
package flowsyntax

import (
	"github.com/pseudocong/pseudocong/openflow"
)

// Flow is one parsed flow: the fields of an OFPT_FLOW_MOD that a rule file
// can set.
type Flow struct {
	Match       openflow.Match
	Priority    uint16 // default openflow.DefaultPriority (32768), as ovs-ofctl
	IdleTimeout uint16 // seconds, 0 = none
	HardTimeout uint16 // seconds, 0 = none
	Cookie      uint64
	Flags       uint16 // openflow.FlowModFlag* (send_flow_rem, check_overlap)
	// Actions in order; empty (or nil) means drop.
	Actions []openflow.Action
}

// FlowMod builds an OFPFC_ADD FLOW_MOD for the flow: no buffered packet,
// out_port NONE.
func (f *Flow) FlowMod(xid uint32) *openflow.FlowMod {
	return &openflow.FlowMod{
		Header:      openflow.Header{Version: openflow.Version, Type: openflow.TypeFlowMod, Xid: xid},
		Match:       f.Match,
		Cookie:      f.Cookie,
		Command:     openflow.FlowModAdd,
		IdleTimeout: f.IdleTimeout,
		HardTimeout: f.HardTimeout,
		Priority:    f.Priority,
		BufferID:    openflow.NoBuffer,
		OutPort:     openflow.PortNone,
		Flags:       f.Flags,
		Actions:     f.Actions,
	}
}
