package testbed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/pseudocong/pseudocong/internal/ready"
)

// DaemonConfig starts a long-running process of a live run: the
// controller or the switch, which the live backend runs as separate
// processes (`pseudocong controller ...`, `pseudocong switch ...`).
type DaemonConfig struct {
	// Binary is the executable; default os.Executable() (the pseudocong
	// binary running the experiment). Tests pass a freshly built binary.
	Binary string
	// Args are the arguments, e.g. {"switch", "--port", "pc-s1", ...}.
	Args []string
	// Output receives stdout and stderr (nil: only the in-memory tail).
	Output io.Writer
	// Ready passes the child a pipe as --ready-fd 3; WaitReady then returns
	// the addresses it bound. Only for commands that take --ready-fd.
	Ready bool
}

// Daemon is a started process. Its output's last 64 KiB are kept for
// error reports.
type Daemon struct {
	cmd  *exec.Cmd
	tail *tailWriter
	done chan struct{}
	err  error // set before done closes
	// readyR is the read end of the --ready-fd pipe (nil without Ready).
	readyR *os.File
}

// StartDaemon starts the process in its own process group, so Stop also
// reaches anything it starts.
func StartDaemon(cfg DaemonConfig) (*Daemon, error) {
	if cfg.Binary == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("daemon: own executable: %w", err)
		}
		cfg.Binary = exe
	}
	d := &Daemon{tail: &tailWriter{max: 64 << 10}, done: make(chan struct{})}
	var out io.Writer = d.tail
	if cfg.Output != nil {
		out = io.MultiWriter(d.tail, cfg.Output)
	}
	args := cfg.Args
	var readyW *os.File
	if cfg.Ready {
		r, w, err := os.Pipe()
		if err != nil {
			return nil, fmt.Errorf("daemon: ready pipe: %w", err)
		}
		d.readyR, readyW = r, w
		args = append(append([]string(nil), args...), "--ready-fd", "3") // ExtraFiles[0] is fd 3
	}
	d.cmd = exec.Command(cfg.Binary, args...)
	d.cmd.Stdout, d.cmd.Stderr = out, out
	if readyW != nil {
		d.cmd.ExtraFiles = []*os.File{readyW}
	}
	// Pdeathsig: if the experiment process dies without tearing down (even
	// SIGKILL), the kernel sends the child SIGTERM, so no controller or
	// switch outlives it. The signal follows the *thread* that forked the
	// child, so the child is started and waited for on one goroutine that
	// keeps its OS thread for the child's whole life.
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the child
		if err := d.cmd.Start(); err != nil {
			started <- err
			close(d.done)
			return
		}
		started <- nil
		d.err = d.cmd.Wait()
		close(d.done)
	}()
	err := <-started
	if readyW != nil {
		// The child holds its own copy; ours must go, or the read end
		// would never see EOF when the child dies before reporting.
		_ = readyW.Close()
	}
	if err != nil {
		if d.readyR != nil {
			_ = d.readyR.Close()
		}
		return nil, fmt.Errorf("daemon %s %v: %w", cfg.Binary, cfg.Args, err)
	}
	return d, nil
}

// WaitReady waits until the child reports the addresses it serves on
// (DaemonConfig.Ready), it exits without a report, or ctx ends. It can be
// called once.
func (d *Daemon) WaitReady(ctx context.Context) (ready.Report, error) {
	if d.readyR == nil {
		return ready.Report{}, errors.New("daemon: WaitReady without DaemonConfig.Ready")
	}
	r := d.readyR
	d.readyR = nil
	rep, err := ready.Read(ctx, r)
	if err != nil {
		return rep, fmt.Errorf("daemon %d: %w", d.Pid(), err)
	}
	return rep, nil
}

// Pid is the process id.
func (d *Daemon) Pid() int { return d.cmd.Process.Pid }

// Done is closed when the process has exited.
func (d *Daemon) Done() <-chan struct{} { return d.done }

// Err is the exit status once Done is closed (nil for exit code 0).
func (d *Daemon) Err() error {
	select {
	case <-d.done:
		return d.err
	default:
		return nil
	}
}

// Output returns the last 64 KiB the process wrote.
func (d *Daemon) Output() string { return d.tail.String() }

// Stop sends SIGTERM to the process group, waits up to grace, then sends
// SIGKILL. It returns nil if the process exited on SIGTERM (or had
// already exited cleanly).
func (d *Daemon) Stop(grace time.Duration) error {
	pgid := -d.cmd.Process.Pid
	select {
	case <-d.done:
		return d.err
	default:
	}
	if err := syscall.Kill(pgid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("daemon %d: SIGTERM: %w", -pgid, err)
	}
	select {
	case <-d.done:
		var ee *exec.ExitError
		if errors.As(d.err, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGTERM {
				return nil // killed by our SIGTERM without handling it
			}
		}
		return d.err
	case <-time.After(grace):
	}
	_ = syscall.Kill(pgid, syscall.SIGKILL)
	<-d.done
	return fmt.Errorf("daemon %d: did not exit within %v of SIGTERM; killed", -pgid, grace)
}

// tailWriter keeps the last max bytes written.
type tailWriter struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	if over := len(w.buf) - w.max; over > 0 {
		w.buf = append(w.buf[:0], w.buf[over:]...)
	}
	return len(p), nil
}

func (w *tailWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.buf)
}
