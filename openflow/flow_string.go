package openflow

import (
	"strconv"
	"strings"
)

// String formats the flow in ovs-ofctl add-flow syntax, e.g.
// "idle_timeout=10,priority=100,tcp,nw_dst=10.0.0.2,tp_dst=80,actions=output:2".
// Cookie and timeouts appear only when non-zero; priority always does.
func (m *FlowMod) String() string {
	return formatFlow(m.Cookie, m.IdleTimeout, m.HardTimeout, m.Priority, &m.Match, m.Actions)
}

// String formats the entry like one line of ovs-ofctl dump-flows (without
// the duration and counters).
func (f *FlowStats) String() string {
	return formatFlow(f.Cookie, f.IdleTimeout, f.HardTimeout, f.Priority, &f.Match, f.Actions)
}

func formatFlow(cookie uint64, idle, hard, priority uint16, m *Match, actions []Action) string {
	var sb strings.Builder
	if cookie != 0 {
		sb.WriteString("cookie=0x")
		sb.WriteString(strconv.FormatUint(cookie, 16))
		sb.WriteByte(',')
	}
	if idle != 0 {
		sb.WriteString("idle_timeout=")
		sb.WriteString(strconv.Itoa(int(idle)))
		sb.WriteByte(',')
	}
	if hard != 0 {
		sb.WriteString("hard_timeout=")
		sb.WriteString(strconv.Itoa(int(hard)))
		sb.WriteByte(',')
	}
	sb.WriteString("priority=")
	sb.WriteString(strconv.Itoa(int(priority)))
	if ms := m.String(); ms != "" {
		sb.WriteByte(',')
		sb.WriteString(ms)
	}
	sb.WriteString(",actions=")
	sb.WriteString(FormatActions(actions))
	return sb.String()
}
