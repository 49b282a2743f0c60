//go:build !amd64

package netsim

// prefetch is a no-op where no prefetch instruction is wired up (see
// prefetch_amd64.go).
func prefetch(*Packet) {}
