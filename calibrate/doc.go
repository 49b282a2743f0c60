// Package calibrate measures an OpenFlow 1.0 switch and fits a profile
// (package profile) that the simulator and the software switch can replay:
// `pseudocong calibrate`.
//
// It acts as the switch's controller and drives probe frames through two
// of its data ports (AF_PACKET on the host interfaces facing them), as
// OFLOPS does, and confirms every rule in the data plane: a rule counts as
// installed when a probe frame for it is forwarded, not when the switch
// answers a BARRIER (Kuźniar et al. found switches that answer early).
//
// The package is split so the numbers can be trusted: the fits (lsq.go,
// fit_inserts.go, fit_packetin.go, moves.go) are pure functions of the
// samples and unit-tested on synthetic data with known parameters and
// noise; the profile writer (profileout.go) is pure too. Only run.go,
// ofclient.go and dataport.go do I/O: ofclient.go is the one file that
// touches openflow.Conn, so a change to that API costs one file.
package calibrate
