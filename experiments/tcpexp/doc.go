// Package tcpexp runs the experiment specs about TCP itself on the sim
// backend (and paper-tcp's cache cell with kernel TCP on the live one):
// paper-tcp (paper 000's data-transfer claim: bulk TCP flows
// through the pica8-p3297 switch collapse where the same flows through the
// ideal switch do not) and mitigations (issue 11: the paper's worst cells
// under each TCAM layout, Packet-In policy, SDN-aware TCP option and
// controller-side option, and combinations, each with its cost).
//
// Its specs have their own schema (Spec), kept apart from the probe
// specs of package experiments, whose grid (base loads × rates ×
// priorities of one-packet probes) has no place for timer profiles,
// reference switches or mitigations; the probe cells of the mitigations
// spec run through experiments.Execute all the same. Outputs: summary.json
// (experiments.Summary's format), per-flow CSVs, cwnd traces (CSV and
// PNG) and a Markdown report (report.md, and mitigations.md for a spec
// with mitigations).
//
// ExecuteLive (live.go) is the live backend of a spec's cache cells:
// kernel-TCP bulk flows through the live switch and a proactive
// controller (experiments/live.RunBulk), the spec's profile against its
// reference, cwnd and the rest from TCP_INFO, beside the same cells
// simulated; WriteLiveOutputs writes its outputs.
package tcpexp
