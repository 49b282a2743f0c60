package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestControllerCommandUsageErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.rules")
	if err := os.WriteFile(bad, []byte("# ok\npriority=1,ip,nw_dst=10.0.0.300,actions=drop\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown app", []string{"--app", "hub"}, "--app"},
		{"proactive without rules", []string{"--app", "proactive"}, "--rules"},
		{"bad rule file names line and token", []string{"--app", "proactive", "--rules", bad}, `line 2: "nw_dst=10.0.0.300"`},
		{"rules for reactive", []string{"--rules", bad}, "--rules is for --app proactive"},
		{"bad priority", []string{"--priority", "random"}, "--priority"},
		{"bad listen", []string{"--listen", "udp:1"}, "--listen"},
		{"negative reorder window", []string{"--reorder-window", "-1ms"}, "--reorder-window"},
		{"zero reorder limit", []string{"--reorder-window", "1ms", "--reorder-limit", "0"}, "--reorder-limit"},
		{"pssl without keys", []string{"--listen", "pssl:0"}, "--private-key"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd := newControllerCommand()
			cmd.SetArgs(append(c.args, "--log-level", "error"))
			cmd.SetContext(context.Background())
			err := cmd.Execute()
			var ue usageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("want usage error containing %q, got %v", c.want, err)
			}
		})
	}
}

func TestBenchControllerCommandUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--mode", "fast"}, {"--switches", "0"}, {"--macs", "1"}, {"--ports", "1"}, {"--loops", "0"}, {"--duration", "0s"},
	} {
		cmd := newBenchCommand()
		cmd.SetArgs(append([]string{"controller"}, args...))
		cmd.SetContext(context.Background())
		var ue usageError
		if err := cmd.Execute(); !errors.As(err, &ue) {
			t.Errorf("bench controller %v: want usage error, got %v", args, err)
		}
	}
}

// TestControllerAndBenchCommands runs `pseudocong controller` and points
// `pseudocong bench controller` at it: the bench prints cbench's lines with
// a non-zero result.
func TestControllerAndBenchCommands(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	ctl := newControllerCommand()
	ctl.SetArgs([]string{"--listen", "tcp:" + addr, "--priority", "ascending", "--log-level", "error"})
	ctl.SetContext(ctx)
	done := make(chan error, 1)
	go func() { done <- ctl.Execute() }()
	defer func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("controller command: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Error("controller command did not stop")
		}
	}()
	for deadline := time.Now().Add(5 * time.Second); ; {
		nc, err := net.Dial("tcp", addr)
		if err == nil {
			nc.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("controller not listening: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}

	var out bytes.Buffer
	bench := newBenchCommand()
	bench.SetArgs([]string{"controller", "--controller", "tcp:" + addr, "--switches", "2", "--macs", "50",
		"--loops", "2", "--duration", "200ms", "--log-level", "error"})
	bench.SetContext(context.Background())
	bench.SetOut(&out)
	if err := bench.Execute(); err != nil {
		t.Fatalf("bench controller: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[1], "2   switches: flows/sec: ") ||
		!strings.HasPrefix(lines[3], "RESULT: 2 switches 2 tests min/max/avg/stdev = ") ||
		strings.Contains(lines[3], "= 0.00/") {
		t.Fatalf("bench output:\n%s", out.String())
	}
}
