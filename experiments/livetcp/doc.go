// Package livetcp runs real Linux TCP between two network-namespace hosts
// through a chain of `pseudocong switch` processes whose ports emulate
// links (egress qdisc, line rate, delay line, loss: the switch's
// --port-qdisc/--port-rate/--port-delay/--port-loss), with iperf3 as the
// traffic source: the live backend of paper 003's policing experiment,
// and reusable for any "kernel TCP through our switch" comparison (issue
// 10's validation dumbbell).
//
// A Bed is a private testbed (testbed.Up with Chain = number of switches)
// and its switch processes; Close removes everything it made (switch
// processes, namespaces, veths) and puts back every sysctl it changed,
// also after a failure. Congestion control: the host's
// net.ipv4.tcp_allowed_congestion_control is widened to what a run needs
// (inside a netns only the allowed algorithms can be chosen) and restored
// by Close; each host namespace gets its own default algorithm
// (net.ipv4.tcp_congestion_control) and tcp_no_metrics_save=1, so no run
// inherits an ssthresh cached by the one before.
package livetcp
