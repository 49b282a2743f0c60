// Package controller is the OpenFlow 1.0 controller: a sans-I/O core that
// turns switch messages into app calls and measures how long a Packet-In
// takes to become a FLOW_MOD, the apps (reactive L2 learning with a
// per-flow installer, proactive rule pusher), and a TCP shell that serves
// many switches at once.
//
// Layers, each usable without the ones above it:
//
//   - Core and Session: App dispatch, metrics, and the PACKET_IN →
//     FLOW_MOD timing on a clock.Clock (wall or virtual). Anything that
//     implements Switch can be connected.
//   - Endpoint: one switch connection at the level of whole encoded
//     messages, without I/O: its openflow.Channel runs the handshake
//     (HELLO, FEATURES, SET_CONFIG) and the echo keepalive on the core's
//     clock; the Endpoint decodes and answers bad input with OpenFlow
//     ERRORs. It is the Switch the Core sees and sends through a Transport.
//   - Server: the TCP shell. It frames each socket's byte stream with
//     openflow.FrameReader for an Endpoint, is its Transport (replies are
//     batched into one write per read), and enforces the connection caps
//     and the handshake and write timeouts.
//
// The simulator drives the same Endpoint (or its own Switch) with frames
// from an in-memory channel and a virtual clock, so the live controller and
// the simulated one are the same code.
package controller

import "github.com/pseudocong/pseudocong/openflow"

// Switch is one connected switch as an app sees it. The TCP shell
// implements it over a socket; the simulator over an in-memory channel
// that carries the encoded bytes.
type Switch interface {
	// DPID is the datapath id from the FEATURES_REPLY.
	DPID() uint64
	// Send encodes m and queues it for the switch. The encoding happens
	// before Send returns, so the caller may reuse m (and everything it
	// points to) afterwards.
	Send(m openflow.Message) error
	// Features is the FEATURES_REPLY of the handshake. Do not modify it.
	Features() *openflow.FeaturesReply
}

// App is controller logic (reactive forwarding, a proactive rule pusher).
//
// Calls for one switch come from one goroutine at a time and in arrival
// order (the switch's reading goroutine in the TCP shell, the scheduler in
// the simulator); calls for different switches may run concurrently.
// Messages, and byte slices inside them such as PacketIn.Data, are only
// valid during the call: copy what must be kept.
type App interface {
	// SwitchConnected is called once the handshake is done, before any
	// HandleMessage for that switch.
	SwitchConnected(sw Switch)
	// SwitchDisconnected is the last call for sw.
	SwitchDisconnected(sw Switch)
	// HandleMessage gets every message of the switch except the ones the
	// connection's openflow.Channel takes (ECHO_REQUEST, ECHO_REPLY, HELLO).
	HandleMessage(sw Switch, m openflow.Message)
}
