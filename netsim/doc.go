// Package netsim models the links of a simulated network on a clock.Clock:
// a point-to-point link direction (rate, propagation delay, MTU, a loss
// model) fed by a sans-I/O qdisc — DropTail, RED with ECN marking, a token
// bucket filter, a policer, or a multi-queue port for OpenFlow's ENQUEUE.
package netsim
