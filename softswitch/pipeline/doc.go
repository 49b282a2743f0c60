// Package pipeline is the modelled data plane of the software switch: it
// plugs the local-CPU agent (package agent) and the TCAM-cache-plus-backing
// placement (package softswitch/dataplane) into the three seams of a
// softswitch.Switch, so that a switch built from a profile (package
// profile) delays packets as the modelled hardware would.
//
//	seam (a) MissHandler → agent.Miss: the CPU builds Packet-Ins (cost p),
//	    batches them (B, periodic flush), rate-limits them; then
//	    Switch.SendPacketIn, or Switch.DropPacketIn when the agent drops.
//	seam (b) Installer   → agent.Submit(flow_mod job): when the CPU picks
//	    the job, the FLOW_MOD is applied to the flow table; the table
//	    listener places new rules (dataplane.Table.Add) and the TCAM cost
//	    (invalidate + write + moves, priced by the profile's tcam.timing)
//	    becomes the job's CPU time. The new rules become usable when the
//	    job is done; packets that hit them earlier wait (path install_wait).
//	    BARRIER is answered once every FLOW_MOD accepted before it is done.
//	    A FLOW_MOD the full job queue refuses is answered FLOW_MOD_FAILED/
//	    EPERM through Switch.ReplyError (the switch's ordered outbox).
//	seam (c) Forwarder   → a hit on a rule in the TCAM is delivered after
//	    the profile's hit delay (path hit). A hit on a rule that lives only
//	    in the backing table holds the packet and submits one swap-in job
//	    (dataplane.Table.SwapIn, full insert cost); packets for the same
//	    rule wait for the same swap-in and are released in arrival order
//	    when it is done (path swap_in).
//
// The switch's flow table (its classifier over all rules) decides which
// rule a packet uses; the TCAM/backing split only decides how long the
// packet waits (see package dataplane). The switch must be built with the
// TCAM layout's tie rule (softswitch.Config.TieBreak = TieBreak(profile)),
// so equal-priority overlaps resolve as in the TCAM; Attach checks it. The
// backing table's size and eviction policy come from the profile's
// backing_table section unless Options override them.
//
// Every delay is taken on the switch's clock: on a clock.Sim the whole
// pipeline runs inside the scheduler loop and is deterministic; on the
// wall clock a live switch really holds packets that long.
//
// Every queue is bounded: the agent's (profile agent.*), the packets held
// for a rule (Options.HoldLimit), the packets in flight through the hit
// delay (Options.DelayLineLimit) and the BARRIERs waiting for FLOW_MODs
// (Options.BarrierLimit); overflow is dropped and counted
// (pseudocong_agent_drops_total, pseudocong_dataplane_drops_total).
package pipeline
