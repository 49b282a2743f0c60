package testenv

import (
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// StartOVSTestController starts Debian's ovs-testcontroller (a MAC-learning
// OpenFlow 1.0 controller) listening on a reserved loopback port and returns
// its address as "127.0.0.1:PORT"; give OVS "tcp:" + addr. Cleanup stops it
// by pidfile and logs its log tail if the test failed.
func StartOVSTestController(t testing.TB) (addr string) {
	t.Helper()
	RequireRoot(t)
	RequireCommand(t, "ovs-testcontroller")
	dir := shortTempDir(t, "tc")
	pidfile := filepath.Join(dir, "tc.pid")
	logfile := filepath.Join(dir, "tc.log")
	t.Cleanup(func() {
		if err := killPidfile(pidfile, 5*time.Second); err != nil {
			t.Logf("ovs-testcontroller cleanup: %v", err)
		}
		if t.Failed() {
			t.Logf("--- last lines of %s ---\n%s", logfile, tailFile(logfile, 40))
		}
	})
	// ovs-testcontroller cannot report a port 0, so it gets a reserved
	// one (no retry needed: nothing else may bind it).
	port := ReservePort(t)
	if _, err := run(nil, "ovs-testcontroller", "-O", "OpenFlow10", "--no-chdir",
		"--pidfile="+pidfile, "--unixctl="+filepath.Join(dir, "tc.ctl"),
		"--log-file="+logfile, "--detach",
		fmt.Sprintf("ptcp:%d:127.0.0.1", port)); err != nil {
		t.Fatalf("start ovs-testcontroller: %v", err)
	}
	// --detach returns once the listener is open; no dial probe, which
	// the controller would take for a switch.
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}
