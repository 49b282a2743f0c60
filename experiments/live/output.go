package live

import (
	"bytes"
	"errors"
	"io"
	"os/exec"
	"sync"
	"syscall"
)

// prefixWriter prefixes every line a child writes with its role, so the
// controller's and the switch's logs can share one stream.
type prefixWriter struct {
	mu     *sync.Mutex
	w      io.Writer
	prefix []byte
	buf    []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.buf = append(p.buf, b...)
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 {
			break
		}
		line := append(append([]byte(nil), p.prefix...), p.buf[:i+1]...)
		p.buf = p.buf[i+1:]
		if _, err := p.w.Write(line); err != nil {
			return len(b), nil // a broken log sink must not kill the child's pipe
		}
	}
	return len(b), nil
}

// outputs hands out prefixWriters onto one sink (nil: none).
func outputs(w io.Writer) func(who string) io.Writer {
	var mu sync.Mutex
	return func(who string) io.Writer {
		if w == nil {
			return nil
		}
		return &prefixWriter{mu: &mu, w: w, prefix: []byte("[" + who + "] ")}
	}
}

// exitedBySignal reports whether err is the exit status of a process
// killed by a signal (the harmless outcome of stopping it).
func exitedBySignal(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled()
}
