package softswitch

import (
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/pseudocong/pseudocong/openflow"
)

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	met, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, 2, Config{Metrics: met})
	fm := flowMod(openflow.FlowModAdd, matchInPort(1), 1, output(2))
	fm.Flags = openflow.FlowModFlagSendFlowRem
	r.send(fm)
	r.send(flowMod(openflow.FlowModAdd, openflow.MatchAll(), 1, output(0))) // refused
	r.sw.Receive(1, udpFrame(t, 1, 2))                                      // hit -> port 2
	r.sw.Receive(2, udpFrame(t, 1, 2))                                      // miss -> packet-in
	r.sw.Receive(9, udpFrame(t, 1, 2))                                      // unknown port
	r.send(flowMod(openflow.FlowModDelete, openflow.MatchAll(), 0))

	want := `
# HELP pseudocong_switch_flow_entries Entries in the flow table.
# TYPE pseudocong_switch_flow_entries gauge
pseudocong_switch_flow_entries 0
# HELP pseudocong_switch_flow_mods_total FLOW_MOD messages processed, by command and result.
# TYPE pseudocong_switch_flow_mods_total counter
pseudocong_switch_flow_mods_total{command="ADD",result="error"} 1
pseudocong_switch_flow_mods_total{command="ADD",result="ok"} 1
pseudocong_switch_flow_mods_total{command="DELETE",result="ok"} 1
# HELP pseudocong_switch_flow_removed_sent_total FLOW_REMOVED messages sent, by reason.
# TYPE pseudocong_switch_flow_removed_sent_total counter
pseudocong_switch_flow_removed_sent_total{reason="delete"} 1
pseudocong_switch_flow_removed_sent_total{reason="hard_timeout"} 0
pseudocong_switch_flow_removed_sent_total{reason="idle_timeout"} 0
# HELP pseudocong_switch_packet_ins_sent_total PACKET_IN messages sent to controllers, by reason.
# TYPE pseudocong_switch_packet_ins_sent_total counter
pseudocong_switch_packet_ins_sent_total{reason="action"} 0
pseudocong_switch_packet_ins_sent_total{reason="no_match"} 1
# HELP pseudocong_switch_packets_dropped_total Frames dropped, by port and reason.
# TYPE pseudocong_switch_packets_dropped_total counter
pseudocong_switch_packets_dropped_total{port="9",reason="unknown_port"} 1
# HELP pseudocong_switch_packets_forwarded_total Frames queued for transmission, by output port.
# TYPE pseudocong_switch_packets_forwarded_total counter
pseudocong_switch_packets_forwarded_total{port="1"} 0
pseudocong_switch_packets_forwarded_total{port="2"} 1
# HELP pseudocong_switch_packets_received_total Frames received, by input port.
# TYPE pseudocong_switch_packets_received_total counter
pseudocong_switch_packets_received_total{port="1"} 1
pseudocong_switch_packets_received_total{port="2"} 1
# HELP pseudocong_switch_table_misses_total Packets that matched no flow entry.
# TYPE pseudocong_switch_table_misses_total counter
pseudocong_switch_table_misses_total 1
`
	names := []string{"pseudocong_switch_flow_entries", "pseudocong_switch_flow_mods_total", "pseudocong_switch_flow_removed_sent_total",
		"pseudocong_switch_packet_ins_sent_total", "pseudocong_switch_packets_dropped_total", "pseudocong_switch_packets_forwarded_total",
		"pseudocong_switch_packets_received_total", "pseudocong_switch_table_misses_total"}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), names...); err != nil {
		t.Fatal(err)
	}
	problems, err := testutil.GatherAndLint(reg)
	if err != nil || len(problems) != 0 {
		t.Fatalf("lint: %v %v", err, problems)
	}
	// Two switches in one process: separate registries, no clash.
	if _, err := NewMetrics(prometheus.NewRegistry()); err != nil {
		t.Fatal(err)
	}
}

// The connection metrics: refusal reasons and timeout phases are there
// from the start (at 0), error types outside OpenFlow 1.0 share one label,
// and a drop is labelled by why the connection refused the message.
func TestConnectionMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	met, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, 1, Config{Metrics: met})
	r.send(&openflow.ErrorMsg{Type: openflow.ErrorTypeFlowModFailed})
	r.send(&openflow.ErrorMsg{Type: 0x1234})
	met.channelDropped(RoleController, openflow.TypePacketIn, fmt.Errorf("x: %w", openflow.ErrQueueFull))
	met.channelDropped(RoleService, openflow.TypeStatsReply, fmt.Errorf("x: %w", openflow.ErrClosed))
	met.serviceRefused(refusedPerPeer)
	met.connTimeout(RoleService, "idle")
	met.setServiceConns(3)
	want := `
# HELP pseudocong_switch_channel_messages_dropped_total OpenFlow messages for a connection that were dropped, by role, message type and reason (queue_full: the peer was not reading; closed: the connection had ended).
# TYPE pseudocong_switch_channel_messages_dropped_total counter
pseudocong_switch_channel_messages_dropped_total{reason="closed",role="service",type="STATS_REPLY"} 1
pseudocong_switch_channel_messages_dropped_total{reason="queue_full",role="controller",type="PACKET_IN"} 1
# HELP pseudocong_switch_connection_timeouts_total OpenFlow connections closed by a timeout, by role and phase (handshake, idle).
# TYPE pseudocong_switch_connection_timeouts_total counter
pseudocong_switch_connection_timeouts_total{phase="handshake",role="controller"} 0
pseudocong_switch_connection_timeouts_total{phase="handshake",role="service"} 0
pseudocong_switch_connection_timeouts_total{phase="idle",role="controller"} 0
pseudocong_switch_connection_timeouts_total{phase="idle",role="service"} 1
# HELP pseudocong_switch_management_connections Management connections open (handshake included).
# TYPE pseudocong_switch_management_connections gauge
pseudocong_switch_management_connections 3
# HELP pseudocong_switch_management_connections_refused_total Management connections closed at accept, by the limit they hit.
# TYPE pseudocong_switch_management_connections_refused_total counter
pseudocong_switch_management_connections_refused_total{reason="max_connections"} 0
pseudocong_switch_management_connections_refused_total{reason="per_peer_limit"} 1
# HELP pseudocong_switch_openflow_errors_received_total OpenFlow ERROR messages received from peers, by role and error type.
# TYPE pseudocong_switch_openflow_errors_received_total counter
pseudocong_switch_openflow_errors_received_total{role="controller",type="FLOW_MOD_FAILED"} 1
pseudocong_switch_openflow_errors_received_total{role="controller",type="other"} 1
`
	names := []string{"pseudocong_switch_channel_messages_dropped_total", "pseudocong_switch_connection_timeouts_total",
		"pseudocong_switch_management_connections", "pseudocong_switch_management_connections_refused_total",
		"pseudocong_switch_openflow_errors_received_total"}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), names...); err != nil {
		t.Fatal(err)
	}
	problems, err := testutil.GatherAndLint(reg)
	if err != nil || len(problems) != 0 {
		t.Fatalf("lint: %v %v", err, problems)
	}
}
