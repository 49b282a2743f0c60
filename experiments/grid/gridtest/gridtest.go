// Package gridtest is the must-show tests' way to share one run of a
// grid: the first test that asks runs it, every other test of the binary
// gets the same result.
package gridtest

import (
	"sync"
	"testing"
)

// Once returns a function that gives a test run's result, running run
// only the first time it is called. Under -short it skips the test,
// saying skip (why: the grid's cost), and does not run; a run that failed
// fails every test that asks.
func Once[R any](skip string, run func() (R, error)) func(testing.TB) R {
	f := sync.OnceValues(run)
	return func(t testing.TB) R {
		t.Helper()
		if testing.Short() {
			t.Skip(skip)
		}
		r, err := f()
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
}
