package experiments

import (
	"bytes"
	"strings"
	"testing"
)

// Off a terminal, progress is one plain line per finished run; on a
// terminal it redraws one bar line and ends it with a newline.
func TestProgress(t *testing.T) {
	var b bytes.Buffer
	p := NewProgress(&b)
	for i := 1; i <= 3; i++ {
		p.Update(i, 3, "run")
	}
	if got := b.String(); got != "[1/3] run\n[2/3] run\n[3/3] run\n" {
		t.Errorf("plain progress %q", got)
	}
	b.Reset()
	p.tty = true
	p.Update(1, 2, "first")
	p.Update(2, 2, "second")
	out := b.String()
	if strings.Count(out, "\r") != 2 || !strings.HasSuffix(out, "\n") || strings.Count(out, "\n") != 1 {
		t.Errorf("bar progress %q", out)
	}
	if !strings.Contains(out, "["+strings.Repeat("#", 15)+strings.Repeat(".", 15)+"]") {
		t.Errorf("half-way bar missing in %q", out)
	}
}
