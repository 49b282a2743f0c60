//go:build integration

package live_test

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/pseudocong/pseudocong/internal/testenv"
)

// liveNames matches the objects of a live testbed with a generated name.
var (
	liveNetnsRE = regexp.MustCompile(`^lv[0-9a-f]{6}-h[0-9]+$`)
	liveLinkRE  = regexp.MustCompile(`^lv[0-9a-f]{6}-s[0-9]+$`)
)

// leftovers is what a live run could leave behind: namespaces, switch-side
// interfaces, and processes started from bin.
type leftovers struct {
	netns, links []string
	procs        []string
}

func snapshot(t testing.TB, bin string) leftovers {
	t.Helper()
	var l leftovers
	if ents, err := os.ReadDir("/var/run/netns"); err == nil {
		for _, e := range ents {
			if liveNetnsRE.MatchString(e.Name()) {
				l.netns = append(l.netns, e.Name())
			}
		}
	}
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range ifs {
		if liveLinkRE.MatchString(i.Name) {
			l.links = append(l.links, i.Name)
		}
	}
	l.procs = testenv.ProcessesOf(bin)
	return l
}

// newSince returns what after has that before had not.
func (after leftovers) newSince(before leftovers) leftovers {
	diff := func(a, b []string) []string {
		var out []string
		for _, x := range a {
			if !slices.Contains(b, x) {
				out = append(out, x)
			}
		}
		return out
	}
	return leftovers{netns: diff(after.netns, before.netns), links: diff(after.links, before.links), procs: diff(after.procs, before.procs)}
}

func (l leftovers) empty() bool { return len(l.netns)+len(l.links)+len(l.procs) == 0 }

// syncBuffer is a bytes.Buffer safe for a child's stdout and stderr.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}
