//go:build integration

package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/pseudocong/pseudocong/internal/testenv"
	"github.com/pseudocong/pseudocong/testbed"
)

func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

// testbed up / status / down through the CLI, with JSON output.
func TestTestbedCommands(t *testing.T) {
	testenv.RequireRoot(t)
	var b [3]byte
	_, _ = rand.Read(b[:])
	name := "c" + hex.EncodeToString(b[:])
	dir := t.TempDir()
	t.Cleanup(func() { _ = testbed.Down(name, testbed.DownOptions{StateDir: dir}) })

	out, err := runCLI(t, "testbed", "up", "--name", name, "--hosts", "3", "--state-dir", dir, "--json")
	if err != nil {
		t.Fatalf("up: %v\n%s", err, out)
	}
	var topo testbed.Topology
	if err := json.Unmarshal([]byte(out), &topo); err != nil {
		t.Fatalf("up --json: %v\n%s", err, out)
	}
	if len(topo.Hosts) != 3 || topo.Hosts[2].SwitchPort != name+"-s3" || topo.Hosts[2].Addr.String() != "10.0.0.3/24" {
		t.Fatalf("topology %+v", topo)
	}
	out, err = runCLI(t, "testbed", "status", "--name", name)
	if err != nil || strings.Count(out, ": ok") != 3 {
		t.Fatalf("status: %v\n%s", err, out)
	}
	if out, err := runCLI(t, "testbed", "down", "--name", name, "--state-dir", dir); err != nil {
		t.Fatalf("down: %v\n%s", err, out)
	}
	if _, err := runCLI(t, "testbed", "status", "--name", name); err == nil {
		t.Fatal("status of a removed testbed succeeded")
	}
	// A bad name is a usage error.
	_, err = runCLI(t, "testbed", "up", "--name", "Bad-Name")
	var ue usageError
	if err == nil || !errors.As(err, &ue) {
		t.Fatalf("bad name: %v, want a usage error", err)
	}
}
