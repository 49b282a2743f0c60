package flowsyntax

import (
	"strconv"
	"strings"

	"github.com/pseudocong/pseudocong/openflow"
)

// String formats the flow in ovs-ofctl syntax, the match part by
// openflow.Match.String; ParseFlow(f.String()) gives f back (the round trip
// the tests check).
func (f *Flow) String() string {
	var sb strings.Builder
	if f.Cookie != 0 {
		sb.WriteString("cookie=0x" + strconv.FormatUint(f.Cookie, 16) + ",")
	}
	if f.IdleTimeout != 0 {
		sb.WriteString("idle_timeout=" + strconv.Itoa(int(f.IdleTimeout)) + ",")
	}
	if f.HardTimeout != 0 {
		sb.WriteString("hard_timeout=" + strconv.Itoa(int(f.HardTimeout)) + ",")
	}
	if f.Flags&openflow.FlowModFlagSendFlowRem != 0 {
		sb.WriteString("send_flow_rem,")
	}
	if f.Flags&openflow.FlowModFlagCheckOverlap != 0 {
		sb.WriteString("check_overlap,")
	}
	sb.WriteString("priority=" + strconv.Itoa(int(f.Priority)))
	if m := f.Match.String(); m != "" {
		sb.WriteString("," + m)
	}
	sb.WriteString(",actions=" + openflow.FormatActions(f.Actions))
	return sb.String()
}
