package live

import (
	"bytes"
	"testing"
)

func TestPrefixWriterSplitsLines(t *testing.T) {
	var sink bytes.Buffer
	out := outputs(&sink)
	ctrl, sw := out("controller"), out("switch")
	for _, w := range []struct {
		who  interface{ Write([]byte) (int, error) }
		data string
	}{
		{ctrl, "a=1 "}, {sw, "b=2\nc="}, {ctrl, "more\n"}, {sw, "3\n"},
	} {
		if n, err := w.who.Write([]byte(w.data)); err != nil || n != len(w.data) {
			t.Fatalf("write %q: %d, %v", w.data, n, err)
		}
	}
	want := "[switch] b=2\n[controller] a=1 more\n[switch] c=3\n"
	if sink.String() != want {
		t.Errorf("got %q, want %q", sink.String(), want)
	}
	if outputs(nil)("x") != nil {
		t.Error("nil sink gave a writer")
	}
}
