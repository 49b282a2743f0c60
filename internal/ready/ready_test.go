package ready

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"testing"
	"time"
)

// The helper process writes a report on fd 3 when asked, or exits without.
func TestMain(m *testing.M) {
	switch os.Getenv("READY_TEST_CHILD") {
	case "report":
		if err := Write(3, Report{OpenFlow: "127.0.0.1:1", Listen: []string{"127.0.0.1:2"}, Metrics: "127.0.0.1:3"}); err != nil {
			os.Exit(3)
		}
		os.Exit(0)
	case "die":
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func start(t *testing.T, mode string) (*exec.Cmd, *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "READY_TEST_CHILD="+mode)
	cmd.ExtraFiles = []*os.File{w} // fd 3
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	_ = w.Close() // the child holds the only write end now
	t.Cleanup(func() { _ = cmd.Wait() })
	return cmd, r
}

// Generous: a busy CI machine may take seconds to start a process.
const wait = 30 * time.Second

func TestReportCrossesProcesses(t *testing.T) {
	cmd, r := start(t, "report")
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	rep, err := Read(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Pid != cmd.Process.Pid || rep.OpenFlow != "127.0.0.1:1" || len(rep.Listen) != 1 || rep.Metrics != "127.0.0.1:3" {
		t.Fatalf("report %+v (child pid %d)", rep, cmd.Process.Pid)
	}
}

func TestChildDeathIsNoReport(t *testing.T) {
	_, r := start(t, "die")
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if _, err := Read(ctx, r); !errors.Is(err, ErrNoReport) {
		t.Fatalf("err = %v, want ErrNoReport", err)
	}
}

func TestReadEndsWithContext(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Read(ctx, r); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestWriteOffAndBadFD(t *testing.T) {
	if err := Write(0, Report{}); err != nil {
		t.Fatalf("fd 0 (off): %v", err)
	}
	if err := Write(-1, Report{}); err == nil {
		t.Fatal("fd -1 accepted")
	}
}
