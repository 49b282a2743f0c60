package testenv

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// Our own binaries bind port 0 and report what they got (--ready-fd,
// testbed.DaemonConfig.Ready): use that for them. ReservePort is for the
// programs that cannot report a port (Prometheus, ovs-testcontroller,
// an OVS controller target) and for addresses a config file must name
// before anything starts.
//
// A port "that was free a moment ago" (listen on :0, close, hand over) is
// not reserved at all: it comes from the kernel's ephemeral range, where
// every outgoing connection on the machine — another test's dial — takes
// its source port, so the child's bind fails or, worse, a client reaches
// the wrong peer. ReservePort avoids both races:
//   - it picks ports below the ephemeral range (ip_local_port_range), which
//     the kernel never hands out on its own;
//   - it holds a machine-wide lock file for the port until the test ends,
//     so no other test process picks it;
//   - it checks that nothing on the machine has bound it.

// reservedSpan is how many ports below the ephemeral range are used.
const reservedSpan = 8000

// ReservePort returns a TCP port on 127.0.0.1 that this test alone may
// bind until it ends.
func ReservePort(t testing.TB) int {
	t.Helper()
	lo, err := ephemeralLow()
	if err != nil {
		t.Fatalf("reserve port: %v", err)
	}
	first := max(lo-reservedSpan, 1024)
	if lo-first < 100 {
		t.Fatalf("reserve port: ip_local_port_range starts at %d, leaving no ports below it", lo)
	}
	dir := filepath.Join(os.TempDir(), "pseudocong-test-ports")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatalf("reserve port: %v", err)
	}
	span := lo - first
	start := rand.IntN(span)
	for i := range span {
		port := first + (start+i)%span
		f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(port)), os.O_CREATE|os.O_RDWR, 0o666)
		if err != nil {
			t.Fatalf("reserve port: %v", err)
		}
		// The lock dies with the process, so a crashed test frees it.
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close()
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil { // some other program has it
			f.Close()
			continue
		}
		l.Close()
		t.Cleanup(func() { f.Close() })
		return port
	}
	t.Fatalf("reserve port: all %d ports below the ephemeral range are taken", span)
	return 0
}

// ReserveAddr is ReservePort as "127.0.0.1:PORT".
func ReserveAddr(t testing.TB) string {
	t.Helper()
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(ReservePort(t)))
}

func ephemeralLow() (int, error) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0, fmt.Errorf("ip_local_port_range: %q", b)
	}
	return strconv.Atoi(f[0])
}
