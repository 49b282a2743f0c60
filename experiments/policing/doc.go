// Package policing is paper 003's experiment: policing vs shaping at an
// SD-WAN CPE, CUBIC vs BBR, uploads and downloads, on the path of
// experiments/topologies/paper003.yaml, with two backends: Sim (netsim
// links and our sans-I/O TCP on the virtual clock) and, in package
// experiments/livetcp, real Linux TCP (iperf3) through `pseudocong
// switch` processes. A Spec (experiments/policing/specs/policing.yaml, built in) names the
// modes; Run gives the summary keys
// policing.<backend>.<cubic|bbr|bbr_client>.<mode>.<up|down>.{goodput_mbps,retransmits}
// and throughput series; MustShow and Agree evaluate issue 14's
// must-shows on them (docs/policing.md).
package policing
