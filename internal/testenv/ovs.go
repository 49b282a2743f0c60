package testenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// OVSOptions tunes StartOVS. The zero value is what most tests want.
type OVSOptions struct {
	// LogLines is how many trailing lines of each daemon log are copied to
	// the test log when the test fails; 0 means 40.
	LogLines int
	// VerboseLog enables debug logging of the vconn (OpenFlow connection)
	// and rconn modules, useful when a controller handshake fails.
	VerboseLog bool
	// Realtime starts ovs-vswitchd under SCHED_FIFO and/or on given CPUs
	// (the daemonised process and every thread it creates inherit both),
	// so that on a busy host its polling thread wakes when a packet or an
	// OpenFlow message arrives instead of when the CFS scheduler gets
	// round to it. Safe because vswitchd with the netdev datapath and no
	// DPDK ports does not busy-poll (measured: ~0.2 % of a core idle;
	// docs/calibrate.md, "Scheduling"). Zero: normal scheduling.
	Realtime Realtime
}

// OVS is a private ovsdb-server + ovs-vswitchd pair. Every ovs-* command it
// runs has OVS_RUNDIR/LOGDIR/DBDIR/SYSCONFDIR pointing at Dir, so it never
// touches a system instance.
type OVS struct {
	// Dir holds the database, sockets, pidfiles and logs.
	Dir string
	// Tag prefixes every bridge name of this instance.
	Tag string

	t   testing.TB
	env []string

	mu      sync.Mutex
	bridges []string
}

// StartOVS starts ovsdb-server and ovs-vswitchd (userspace datapath, no
// kernel module) in a private directory. Cleanup deletes the bridges (whose
// tap devices live in the root namespace), stops both daemons by pidfile and,
// if the test failed, logs the tail of their logs.
func StartOVS(t testing.TB, opts OVSOptions) *OVS {
	t.Helper()
	RequireRoot(t)
	RequireCommand(t, "ovsdb-tool", "ovsdb-server", "ovs-vswitchd", "ovs-vsctl", "ovs-ofctl", "ovs-appctl")
	if c := opts.Realtime.Commands(); len(c) > 0 {
		RequireCommand(t, c...)
	}
	if opts.LogLines == 0 {
		opts.LogLines = 40
	}
	holdOVSLock(t)
	dir := shortTempDir(t, "ovs")
	o := &OVS{
		Dir: dir,
		Tag: NewTag(),
		t:   t,
		env: []string{
			"OVS_RUNDIR=" + dir, "OVS_LOGDIR=" + dir,
			"OVS_DBDIR=" + dir, "OVS_SYSCONFDIR=" + dir,
		},
	}
	t.Cleanup(func() { o.stop(opts.LogLines) })

	db := filepath.Join(dir, "conf.db")
	schema, err := ovsSchema()
	if err != nil {
		t.Fatalf("start ovs: %v", err)
	}
	vswitchd := opts.Realtime.Command("ovs-vswitchd")
	steps := [][]string{
		{"ovsdb-tool", "create", db, schema},
		{"ovsdb-server", "--remote=punix:" + filepath.Join(dir, "db.sock"),
			"--pidfile=" + filepath.Join(dir, "ovsdb-server.pid"),
			"--log-file=" + filepath.Join(dir, "ovsdb-server.log"),
			"--no-chdir", "--detach", db},
		{"ovs-vsctl", "--no-wait", "init"},
		append(vswitchd, "--pidfile="+filepath.Join(dir, "ovs-vswitchd.pid"),
			"--log-file="+filepath.Join(dir, "ovs-vswitchd.log"),
			"--no-chdir", "--detach", "unix:"+filepath.Join(dir, "db.sock")),
	}
	for _, step := range steps {
		if _, err := run(o.env, step[0], step[1:]...); err != nil {
			t.Fatalf("start ovs: %v", err)
		}
	}
	if opts.Realtime.On() {
		pid, err := o.VswitchdPID()
		if err == nil {
			err = opts.Realtime.Check(pid)
		}
		if err != nil {
			t.Fatalf("start ovs: ovs-vswitchd under %v: %v", opts.Realtime, err)
		}
	}
	if opts.VerboseLog {
		for _, module := range []string{"vconn", "rconn"} {
			if _, err := o.Appctl("vlog/set", module+":file:dbg"); err != nil {
				t.Fatalf("start ovs: %v", err)
			}
		}
	}
	return o
}

// ovsSchema locates vswitch.ovsschema (Debian: /usr/share/openvswitch).
func ovsSchema() (string, error) {
	for _, p := range []string{
		"/usr/share/openvswitch/vswitch.ovsschema",
		"/usr/local/share/openvswitch/vswitch.ovsschema",
	} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("vswitch.ovsschema not found (is openvswitch-switch installed?)")
}

// VswitchdPID returns ovs-vswitchd's pid, from its pidfile.
func (o *OVS) VswitchdPID() (int, error) {
	b, err := os.ReadFile(filepath.Join(o.Dir, "ovs-vswitchd.pid"))
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("ovs-vswitchd pidfile: %w", err)
	}
	return pid, nil
}

// Env returns the OVS_* variables that point ovs-* commands at this
// instance, for tests that run their own commands.
func (o *OVS) Env() []string { return append([]string(nil), o.env...) }

// Vsctl runs ovs-vsctl against this instance and returns its output.
func (o *OVS) Vsctl(args ...string) (string, error) {
	return run(o.env, "ovs-vsctl", append([]string{"--timeout=20"}, args...)...)
}

// Ofctl runs ovs-ofctl with this instance's environment (so a bridge name
// as target reaches this vswitchd's management socket).
func (o *OVS) Ofctl(args ...string) (string, error) {
	return run(o.env, "ovs-ofctl", args...)
}

// Appctl runs ovs-appctl against this instance (default target
// ovs-vswitchd; pass "-t", "ovsdb-server" first for the database).
func (o *OVS) Appctl(args ...string) (string, error) {
	return run(o.env, "ovs-appctl", append([]string{"--timeout=20"}, args...)...)
}

// AddBridge creates a userspace (datapath_type=netdev) bridge speaking only
// OpenFlow 1.0, in fail-mode secure, with the given datapath id, and returns
// its real name: o.Tag + name. name may have at most 9 bytes.
func (o *OVS) AddBridge(name string, dpid uint64) string {
	o.t.Helper()
	br := tagged(o.t, o.Tag, name)
	_, err := o.Vsctl("add-br", br,
		"--", "set", "bridge", br, "datapath_type=netdev", "protocols=OpenFlow10",
		fmt.Sprintf("other-config:datapath-id=%016x", dpid),
		"--", "set-fail-mode", br, "secure")
	if err != nil {
		o.t.Fatalf("add bridge: %v", err)
	}
	o.mu.Lock()
	o.bridges = append(o.bridges, br)
	o.mu.Unlock()
	return br
}

// AddPort attaches an existing interface to bridge br. ofport > 0 requests
// that OpenFlow port number; 0 lets OVS choose.
func (o *OVS) AddPort(br, iface string, ofport int) {
	o.t.Helper()
	args := []string{"add-port", br, iface}
	if ofport > 0 {
		args = append(args, "--", "set", "interface", iface, fmt.Sprintf("ofport_request=%d", ofport))
	}
	if _, err := o.Vsctl(args...); err != nil {
		o.t.Fatalf("add port: %v", err)
	}
}

// OFPort returns the OpenFlow port number OVS assigned to iface.
func (o *OVS) OFPort(iface string) (int, error) {
	out, err := o.Vsctl("get", "interface", iface, "ofport")
	if err != nil {
		return 0, err
	}
	var n int
	if _, err := fmt.Sscan(out, &n); err != nil || n <= 0 {
		return 0, fmt.Errorf("ofport of %s: %q", iface, out)
	}
	return n, nil
}

// SetController points br at an OVS controller target such as
// "tcp:127.0.0.1:6653", with a 1 s maximum reconnect backoff so tests do
// not wait out OVS's default 8 s.
func (o *OVS) SetController(br, target string) {
	o.t.Helper()
	_, err := o.Vsctl("set-controller", br, target,
		"--", "set", "controller", br, "max_backoff=1000")
	if err != nil {
		o.t.Fatalf("set controller: %v", err)
	}
}

// IsConnected reports the controller connection state of br as OVS sees
// it. With several controllers it is true when all are connected.
func (o *OVS) IsConnected(br string) (bool, error) {
	out, err := o.Vsctl("get", "controller", br, "is_connected")
	if err != nil {
		return false, err
	}
	for _, f := range strings.Fields(out) {
		if f != "true" {
			return false, nil
		}
	}
	return out != "", nil
}

// WaitConnected polls until br's controller connection is up. Connect the
// controller before sending traffic: in fail-mode secure, packets that
// arrive earlier install datapath drop flows that are not revalidated.
//
// ovs-vswitchd refreshes the is_connected column only every ~5 s, so this
// also reads its log, where rconn reports the connection as soon as it
// happens; either source counts.
func (o *OVS) WaitConnected(br string, timeout time.Duration) error {
	return poll(timeout, 50*time.Millisecond, func() error {
		if o.rconnLogConnected(br) {
			return nil
		}
		ok, err := o.IsConnected(br)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("bridge %s: controller not connected", br)
		}
		return nil
	})
}

// rconnLogConnected reports whether the last rconn state line about br in
// the vswitchd log says "connected" (e.g.
// "rconn|INFO|br0<->tcp:127.0.0.1:6653: connected").
func (o *OVS) rconnLogConnected(br string) bool {
	b, err := os.ReadFile(filepath.Join(o.Dir, "ovs-vswitchd.log"))
	if err != nil {
		return false
	}
	last := ""
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, "|rconn|") && strings.Contains(line, "|"+br+"<->") {
			last = line
		}
	}
	return strings.HasSuffix(last, ": connected")
}

// DumpFlows returns `ovs-ofctl -O OpenFlow10 dump-flows br` output.
func (o *OVS) DumpFlows(br string) (string, error) {
	return o.Ofctl("-O", "OpenFlow10", "dump-flows", br)
}

func (o *OVS) stop(logLines int) {
	o.mu.Lock()
	bridges := append([]string(nil), o.bridges...)
	o.mu.Unlock()
	// Delete bridges while vswitchd still runs, so it removes their tap
	// devices from the root namespace.
	for _, br := range bridges {
		if _, err := o.Vsctl("--if-exists", "del-br", br); err != nil {
			o.t.Logf("ovs cleanup: %v", err)
		}
	}
	for _, d := range []string{"ovs-vswitchd", "ovsdb-server"} {
		if err := killPidfile(filepath.Join(o.Dir, d+".pid"), 5*time.Second); err != nil {
			o.t.Logf("ovs cleanup: stop %s: %v", d, err)
		}
	}
	for _, br := range bridges {
		if interfaceExists(br) {
			if _, err := run(nil, "ip", "link", "del", br); err != nil {
				o.t.Logf("ovs cleanup: %v", err)
			}
		}
	}
	if o.t.Failed() {
		for _, d := range []string{"ovs-vswitchd", "ovsdb-server"} {
			log := filepath.Join(o.Dir, d+".log")
			o.t.Logf("--- last %d lines of %s ---\n%s", logLines, log, tailFile(log, logLines))
		}
	}
}

// ovsLockWait bounds how long a test waits for another test's Open vSwitch.
const ovsLockWait = 10 * time.Minute

// holdOVSLock makes this test the only one on the machine running an Open
// vSwitch until it ends. Every ovs-vswitchd with the netdev datapath creates
// a tap interface named "ovs-netdev" in the root namespace; a second one
// started while the first lives fails with "creating tap device failed:
// Device or resource busy" and gets no bridge. `go test ./...` runs packages
// in parallel processes, so the lock is a file lock, not a mutex. Registered
// before the daemons' cleanup, it is released after they have stopped.
func holdOVSLock(t testing.TB) {
	t.Helper()
	path := filepath.Join(os.TempDir(), "pseudocong-ovs.lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatalf("ovs lock: %v", err)
	}
	deadline := time.Now().Add(ovsLockWait)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			f.Close()
			t.Fatalf("ovs lock %s: another test's Open vSwitch still runs after %v: %v", path, ovsLockWait, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Cleanup(func() { f.Close() }) // closing the file releases the lock
}
