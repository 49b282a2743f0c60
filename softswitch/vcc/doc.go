// Package vcc is virtualized congestion control (vCC, Cronkite-Ratcliff et
// al., SIGCOMM 2016) as a feature of the software switch's tenant-facing
// ports: it turns a non-ECN tenant's TCP flow into "virtual ECN" (vECN) —
// ECN negotiated and data marked ECT(0) on the fabric, congestion marks
// answered by throttling the receive window in the ACKs going back to the
// tenant, ECN bits hidden from the tenant.
//
// A Translator is sans-I/O: it sees frames (FromTenant for frames a tenant
// port receives, ToTenant for frames the switch transmits on one) with
// the time of a clock.Clock, rewrites them in place (same length, checksums
// updated incrementally) and keeps per-flow state in a bounded table. It
// arms no timers: idle flows expire lazily as frames pass. The switch core
// (softswitch.PortFilter) calls it with its own lock held, so the same code
// runs in the live switch and in the simulator's. See docs/vcc.md.
package vcc
