package live

import (
	"context"
	"fmt"
)

// startBackground runs serve on its own goroutine until it signals ready
// (or fails, or ctx ends), and returns the function that stops it and
// reports its error. what names it in errors ("responder on h2").
func startBackground[T any](ctx context.Context, what string, ready chan T, serve func(ctx context.Context, ready chan T) error) (stop func() error, err error) {
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- serve(sctx, ready) }()
	select {
	case <-ready:
	case err := <-done:
		cancel()
		return nil, fmt.Errorf("%s: %w", what, err)
	case <-ctx.Done():
		cancel()
		<-done
		return nil, ctx.Err()
	}
	return func() error {
		cancel()
		if err := <-done; err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return nil
	}, nil
}
