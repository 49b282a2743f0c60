package experiments

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
)

// Progress shows how far a run is: a redrawn bar on a terminal, one plain
// line per finished run otherwise (logs, CI).
type Progress struct {
	mu    sync.Mutex
	w     io.Writer
	tty   bool
	width int
}

// NewProgress writes to w; the bar form is used when w is a terminal.
func NewProgress(w io.Writer) *Progress {
	return &Progress{w: w, tty: isTerminal(w), width: 30}
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Update reports that done of total runs have finished, the last one
// being label. It matches Options.Progress.
func (p *Progress) Update(done, total int, label string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.tty {
		fmt.Fprintf(p.w, "[%d/%d] %s\n", done, total, label)
		return
	}
	filled := p.width * done / max(total, 1)
	bar := strings.Repeat("#", filled) + strings.Repeat(".", p.width-filled)
	line := fmt.Sprintf("\r[%s] %3d/%d %-40s", bar, done, total, label)
	fmt.Fprint(p.w, line)
	if done == total {
		fmt.Fprintln(p.w)
	}
}
