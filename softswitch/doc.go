// Package softswitch is the OpenFlow 1.0 software switch: a sans-I/O core
// (Switch) and thin shells that connect it to the world (Session: the
// controller connection with reconnect and the passive listeners for
// management clients such as ovs-ofctl).
//
// # Core
//
// Switch takes three kinds of input — a frame on a port (Receive), an
// OpenFlow message from a connection (HandleMessage), a timer from its
// clock.Clock (flow expiry) — and produces outputs through Port.Transmit,
// Channel.Send and three seams. All state sits behind one mutex; outputs
// leave through an ordered outbox that runs without the lock (see
// outbox.go), so the same core runs on the wall clock with many goroutines
// and inside the discrete-event simulator, where it is deterministic.
//
// The flow table (package flowtable) has OpenFlow 1.0 semantics: ADD
// replaces an entry of identical match and priority (counters reset),
// CHECK_OVERLAP refuses overlapping same-priority entries, MODIFY and
// MODIFY_STRICT change actions (or add when nothing matches), DELETE and
// DELETE_STRICT honour out_port, exact-match entries outrank wildcard
// ones, idle/hard timeouts produce FLOW_REMOVED when SEND_FLOW_REM is set.
// Overlapping entries of equal priority resolve by Config.TieBreak: the
// earlier one wins by default, the later one for a lowest-first TCAM.
// An exact-match entry keeps the priority its FLOW_MOD gave (Open vSwitch
// rewrites it to 65535); it outranks wildcard entries through its
// effective priority instead, and the TCAM experiments keep the priority
// pattern the controller chose.
// EMERG entries are kept in a separate emergency table (reported by flow
// stats as table 0xfe) but never used for forwarding: emergency mode is not
// modelled.
//
// Table miss: with a controller connected, a PACKET_IN (reason NO_MATCH)
// whose buffer_id comes from a store of Config.Buffers slots (default 256;
// ids carry a generation so stale ids get BUFFER_UNKNOWN, used ones
// BUFFER_EMPTY; slots are reused after 5 s like Open vSwitch) and whose data
// is cut to miss_send_len; with no free slot the whole packet goes with
// NO_BUFFER. A FLOW_MOD or PACKET_OUT naming the buffer releases the packet
// (a FLOW_MOD sends it through the flow table, as Open vSwitch does). With
// no controller: fail mode secure drops misses, standalone forwards them as
// an L2 learning switch.
//
// Actions: OUTPUT (physical, IN_PORT, FLOOD, ALL, CONTROLLER, LOCAL,
// NORMAL = L2 learning switch, TABLE in PACKET_OUT only), the set-field
// actions with incremental IPv4 / TCP / UDP checksum updates, VLAN
// push/modify/pop; ENQUEUE into a port's queues: a Port that implements
// QueuedPort (an egress.Shaper with a prio qdisc, live or on the virtual
// clock) has queues 0..n-1 that QUEUE_GET_CONFIG and QUEUE stats report,
// ENQUEUE to a queue it lacks is refused (BAD_ACTION/BAD_QUEUE) or, if the
// port changed since, dropped; ENQUEUE to a port without queues is OUTPUT,
// as in Open vSwitch. VENDOR messages,
// vendor stats and vendor actions are refused with BAD_VENDOR.
//
// # Seams for the instrumented data plane
//
// Three interfaces let a later layer add the modelled delays of the paper
// (TCAM cache + backing table, the rate-limited local-CPU agent that
// batches Packet-Ins, the hit forwarding delay) without touching the
// OpenFlow logic. Each has an ideal implementation (ideal.go) with zero
// delay, used by profile "ideal" and by default:
//
//	(a) MissHandler  every PACKET_IN (table miss or OUTPUT:CONTROLLER).
//	                 Ideal: Switch.SendPacketIn at once. Modelled: the agent
//	                 queues/batches/rate-limits, then SendPacketIn, or
//	                 DropPacketIn to free the buffer.
//	(b) Installer    every validated FLOW_MOD and every BARRIER_REQUEST.
//	                 Ideal: Switch.ApplyFlowMod / Switch.ReplyBarrier at
//	                 once. Modelled: apply after the CPU cost; a BARRIER is
//	                 answered only after every earlier FLOW_MOD of its
//	                 channel was applied (barrier ordering); a FLOW_MOD
//	                 it refuses is answered with Switch.ReplyError, which
//	                 keeps the outbox order.
//	(c) Forwarder    every table hit before its actions run. Ideal:
//	                 Switch.Deliver at once. Modelled: hold the frame for the
//	                 profile's hit delay on the clock, then Deliver.
//
// A flowtable.Listener (SetTableListener) sees every table change, so the
// TCAM placement layer can mirror the table.
//
// Seams are called from the outbox, without the switch lock, in the order
// the core produced the work; they may call back into the switch.
//
// # Shell
//
// Session dials the controller target (tcp:, ssl:, unix:) and redials with
// capped exponential backoff (100 ms doubling to 8 s, like Open vSwitch's
// max_backoff), and serves passive listeners (ptcp:, pssl:, punix:) for
// management clients. Each connection is an openflow.Conn: HELLO
// negotiation, ECHO keepalive, framing and decoding; a message that does not
// decode is answered with an OpenFlow ERROR by the connection, a broken
// stream is closed, and the switch keeps running and reconnects.
//
// A slow or dead peer costs only itself. Channel.Send never waits, so the
// outbox (and with it forwarding and every other connection) never waits
// on a connection: asynchronous messages (PACKET_IN, FLOW_REMOVED,
// PORT_STATUS) are dropped when the connection's write queue is full, and
// replies are always queued, so a multipart reply goes out whole. What
// bounds the replies is per-peer back-pressure: once a peer has
// Conn.ReplyBacklog bytes of replies unread (1 MiB), the switch neither
// reads nor handles its further requests until it reads, and a peer that
// never reads is dropped by the write timeout. Every drop is counted
// (channel_messages_dropped_total, by role, type and reason). Passive
// connections are limited in total and per source IP, must finish HELLO
// within ServiceHandshakeTimeout, and are closed after ServiceIdleTimeout
// without a whole message (a trickle of bytes does not count; a quiet
// client stays up by answering echo requests).
//
// Fail mode follows whether a controller channel is attached: standalone
// takes over as soon as the controller connection is lost (Open vSwitch
// waits for its inactivity probe first).
package softswitch
