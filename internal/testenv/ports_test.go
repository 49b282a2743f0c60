package testenv

import (
	"net"
	"strconv"
	"testing"
)

func TestReservePortIsOutsideEphemeralRangeAndUnique(t *testing.T) {
	lo, err := ephemeralLow()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for range 50 {
		p := ReservePort(t)
		if p >= lo || p < 1024 {
			t.Fatalf("port %d not below the ephemeral range (starts %d)", p, lo)
		}
		if seen[p] {
			t.Fatalf("port %d reserved twice", p)
		}
		seen[p] = true
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			t.Fatalf("reserved port %d cannot be bound: %v", p, err)
		}
		l.Close()
	}
}
