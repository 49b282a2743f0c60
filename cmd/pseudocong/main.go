// Command pseudocong is the testbed's single binary: an OpenFlow 1.0
// controller, an instrumented software switch, probes, experiments and
// benchmarks, as cobra subcommands.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// exitUsage is returned for bad input (unknown spec, bad flags), as the
// experiment issue asks: scripts can tell a usage error from a failed run.
const exitUsage = 2

// usageError marks errors caused by the user's input.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usageErrorf(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRootCommand()
	err := root.ExecuteContext(ctx)
	if err == nil {
		return
	}
	fmt.Fprintln(os.Stderr, "pseudocong:", err)
	var ue usageError
	if errors.As(err, &ue) {
		os.Exit(exitUsage)
	}
	os.Exit(1)
}
