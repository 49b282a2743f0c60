// Package vccgrid is the `vcc` experiment: paper 001's four experiments
// on virtualized congestion control, in the simulator. Tenant senders'
// frames pass the same vcc.Translator the live switch runs (on the
// virtual clock) at the tenant edge of a dumbbell whose bottleneck is RED
// with ECN marking.
package vccgrid
