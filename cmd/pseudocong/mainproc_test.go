package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Tests that need the real main() — its exit status, its stderr — re-run
// this test binary as the command: the child sees PSEUDOCONG_TEST_MAIN=1,
// runs main() with PSEUDOCONG_TEST_ARGS and exits.
//
// actAsMain, first in such a test, turns the child into the command.
func actAsMain() {
	if os.Getenv("PSEUDOCONG_TEST_MAIN") != "1" {
		return
	}
	os.Args = append([]string{"pseudocong"}, strings.Fields(os.Getenv("PSEUDOCONG_TEST_ARGS"))...)
	main()
	os.Exit(0)
}

// runMain runs main() with args (split on spaces) in a child re-running
// test, and returns its exit status and stderr.
func runMain(t *testing.T, test, args string) (code int, stderr string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$")
	cmd.Env = append(os.Environ(), "PSEUDOCONG_TEST_MAIN=1", "PSEUDOCONG_TEST_ARGS="+args)
	var buf bytes.Buffer
	cmd.Stderr = &buf
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), buf.String()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, buf.String()
}
