// Package live is the live backend of the experiments: it runs the same
// cells as the sim backend on real Linux plumbing of one host. A testbed
// (package testbed: two network-namespace hosts on veth pairs) is brought
// up; for every cell the controller and the switch start as child
// processes of the same binary (`pseudocong controller`, `pseudocong
// switch --port ... --profile ...`), the base load is pushed into the
// switch's TCAM through its passive OpenFlow listener and confirmed with a
// BARRIER, and the raw-frame endpoints of package probes/live measure on
// the wall clock: SYN → SYN-ACK RTTs for handshake cells, the one-way
// delay host 1 → host 2 for packet_in cells (both hosts are namespaces of
// one kernel, so they share its clock). data cells are not supported:
// their rules must sit in the switch's backing table, which no OpenFlow
// message can ask for. Afterwards the processes stop and the testbed
// goes down on every exit path: error, context cancellation (Ctrl-C in
// the CLI), success.
//
// Besides the cells, a run can make real kernel connect() calls under
// several switch profiles (KernelRun): the hosts' own TCP stacks then show
// whether the modelled switch delay pushes handshakes past Linux's 1 s SYN
// RTO (TCP_INFO's retransmission count).
//
// Agreement: every cell is also simulated (package
// experiments/sim) with the same scenario, and the ratio of the live
// median RTT to the simulated one is reported; the design's promise is
// that the two clocks agree within noise.
//
// Bulk runs (RunBulk, bulk.go; paper-tcp's live cell): kernel-TCP bulk
// flows from a socket per flow in host 1 to a sink in host 2 through the
// switch with a proactive controller (`pseudocong controller --app
// proactive`) that pushes every flow's rules, the TCAM optionally scaled
// down (`switch --tcam-capacity`) so the rules are swapped in and out;
// each sender's cwnd, ssthresh, RTT, RTO and retransmissions are sampled
// from TCP_INFO (RunKernelBulk, kernelbulk.go), the client namespace's
// nstat counters read before and after.
//
// The package imports experiments/sim but not experiments (which imports
// it): it takes plain cells in and hands sim.Outcome values and summary
// values back.
package live
