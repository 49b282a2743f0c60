package gridtest

import (
	"errors"
	"fmt"
	"runtime"
	"testing"
)

// fakeT records a Fatal and ends its goroutine, as testing.T does.
type fakeT struct {
	testing.TB
	fatal string
}

func (f *fakeT) Helper() {}
func (f *fakeT) Fatal(args ...any) {
	f.fatal = fmt.Sprint(args...)
	runtime.Goexit()
}

func call[R any](get func(testing.TB) R, t testing.TB) (r R, fatal string) {
	ft := &fakeT{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		r = get(ft)
	}()
	<-done
	return r, ft.fatal
}

// The run happens once for every caller; a failed run fails each caller.
func TestOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("Once skips under -short: nothing to see there")
	}
	runs := 0
	get := Once("unused", func() (int, error) { runs++; return 42, nil })
	bad := Once("unused", func() (int, error) { runs++; return 0, errors.New("boom") })
	for range 3 {
		if v, fatal := call(get, t); v != 42 || fatal != "" {
			t.Fatalf("got %d, %q", v, fatal)
		}
		if _, fatal := call(bad, t); fatal != "boom" {
			t.Fatalf("failed run: fatal %q", fatal)
		}
	}
	if runs != 2 {
		t.Fatalf("ran %d times, want once each", runs)
	}
}
