package openflow

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/internal/testpki"
)

// TestInteropOvsOfctl runs Open vSwitch's ovs-ofctl (a strict OpenFlow
// client) against our Conn: `probe` does HELLO negotiation and an ECHO
// round trip. Skipped where Open vSwitch is not installed.
func TestInteropOvsOfctl(t *testing.T) {
	requireCommand(t, "ovs-ofctl")
	pki := testpki.NewCA(t, "interop CA")
	srv, cli := pki.Issue(t, "controller"), pki.Issue(t, "ofctl")
	srvTLS := &TLSConfig{CertFile: srv.CertFile, KeyFile: srv.KeyFile, CAFile: pki.CertFile}
	sslArgs := []string{"--private-key=" + cli.KeyFile, "--certificate=" + cli.CertFile, "--ca-cert=" + pki.CertFile}

	tests := []struct {
		name    string
		listen  string
		args    []string
		wantOK  bool
		wantOut string // substring of ovs-ofctl's output on failure
	}{
		{"OpenFlow10 hello of length 8", "ptcp:0:127.0.0.1", []string{"-O", "OpenFlow10"}, true, ""},
		{"default versions, bitmap with 1.0", "ptcp:0:127.0.0.1", nil, true, ""},
		{"OpenFlow13 only", "ptcp:0:127.0.0.1", []string{"-O", "OpenFlow13"}, false, "version negotiation failed"},
		{"ssl with mutual auth", "pssl:0:127.0.0.1", append([]string{"-O", "OpenFlow10"}, sslArgs...), true, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := Listen(tc.listen, srvTLS)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			srvErr := make(chan error, 1)
			go func() {
				nc, err := l.Accept()
				if err != nil {
					srvErr <- err
					return
				}
				c := NewConn(nc, quietConfig())
				if err := c.Handshake(context.Background()); err != nil {
					srvErr <- err
					return
				}
				srvErr <- c.Serve(HandlerFunc(func(*Conn, Message) {}))
			}()
			scheme := "tcp:"
			if strings.HasPrefix(tc.listen, "pssl") {
				scheme = "ssl:"
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			args := append(append([]string{"-vvconn:dbg"}, tc.args...), "probe", scheme+l.Addr().String())
			out, err := exec.CommandContext(ctx, "ovs-ofctl", args...).CombinedOutput()
			if tc.wantOK != (err == nil) {
				t.Fatalf("ovs-ofctl %v: %v\n%s", args, err, out)
			}
			if !strings.Contains(string(out), tc.wantOut) {
				t.Fatalf("output %q lacks %q", out, tc.wantOut)
			}
			select {
			case err := <-srvErr:
				t.Logf("server side ended: %v", err)
				if !tc.wantOK && err == nil {
					t.Fatalf("server accepted an OpenFlow13-only peer")
				}
			case <-time.After(5 * time.Second):
				t.Fatal(fmt.Errorf("server side did not notice ovs-ofctl leaving"))
			}
		})
	}
}

// TestInteropOvsTestcontroller dials Open vSwitch's ovs-testcontroller as
// a switch would: the handshake succeeds and the controller's first
// request (FEATURES_REQUEST) arrives decoded. Skipped where Open vSwitch is
// not installed.
func TestInteropOvsTestcontroller(t *testing.T) {
	requireCommand(t, "ovs-testcontroller")
	// Find a free port (a small race with other processes is acceptable
	// for a test).
	l, err := Listen("ptcp:0:127.0.0.1", nil)
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().String()
	l.Close()
	_, portStr, _ := strings.Cut(port, ":")
	dir := t.TempDir()
	cmd := exec.Command("ovs-testcontroller", "-O", "OpenFlow10", "--no-chdir",
		"--pidfile="+dir+"/tc.pid", "--unixctl="+dir+"/tc.ctl", "ptcp:"+portStr+":127.0.0.1")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var c *Conn
	for { // wait for the controller to listen
		nc, err := Dial(ctx, "tcp:127.0.0.1:"+portStr, nil)
		if err == nil {
			c = NewConn(nc, quietConfig())
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("ovs-testcontroller never listened: %v\n%s", err, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	defer c.Close()
	if err := c.Handshake(ctx); err != nil {
		t.Fatalf("handshake with ovs-testcontroller: %v\n%s", err, out.String())
	}
	m, err := c.ReadMessage()
	if err != nil {
		t.Fatal(err)
	}
	if m.MsgType() != TypeFeaturesRequest {
		t.Fatalf("first request %v, want FEATURES_REQUEST", m.MsgType())
	}
	if _, err := c.Echo(ctx); err != nil {
		t.Fatalf("echo to ovs-testcontroller: %v", err)
	}
}
