// Package workpool runs a fixed list of independent jobs on a bounded
// pool of goroutines and hands back their results in job order, so a
// caller's output never depends on how many workers ran or which job
// finished first.
package workpool

import (
	"context"
	"errors"
	"runtime"
	"sync"
)

// Options tune a Map.
type Options struct {
	// Workers is how many jobs run at once (0 or less: GOMAXPROCS).
	Workers int
	// Progress, if set, is called after every finished job with how many
	// are done, of how many, and the finished job's index. Calls do not
	// overlap, so it may write to one stream without a lock of its own.
	Progress func(done, total, i int)
}

// Map calls do(i) for every i in [0, n) on at most Options.Workers
// goroutines and returns the results in index order. Jobs start in index
// order; once ctx is done no further job starts (running ones finish, and
// their results are kept). The error joins every job's error in index
// order and, if ctx kept any job from starting, ctx's error; results of
// failed or unstarted jobs are R's zero value.
func Map[R any](ctx context.Context, n int, o Options, do func(i int) (R, error)) ([]R, error) {
	workers := o.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	out := make([]R, n)
	errs := make([]error, n)
	jobs := make(chan int)
	var (
		mu      sync.Mutex
		done    int
		skipped bool
		wg      sync.WaitGroup
	)
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				if ctx.Err() != nil { // fed just as ctx ended
					mu.Lock()
					skipped = true
					mu.Unlock()
					continue
				}
				out[i], errs[i] = do(i)
				if o.Progress != nil {
					mu.Lock()
					done++
					o.Progress(done, n, i)
					mu.Unlock()
				}
			}
		}()
	}
feed:
	for i := range n {
		select {
		case jobs <- i:
		case <-ctx.Done():
			mu.Lock() // a worker may be setting it too (fed just as ctx ended)
			skipped = true
			mu.Unlock()
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	var canceled error
	if skipped {
		canceled = ctx.Err()
	}
	return out, errors.Join(append(errs, canceled)...)
}

// Run is Map for jobs that leave their results themselves (each in its
// own slot of the caller's slice).
func Run(ctx context.Context, n int, o Options, do func(i int) error) error {
	_, err := Map(ctx, n, o, func(i int) (struct{}, error) { return struct{}{}, do(i) })
	return err
}
