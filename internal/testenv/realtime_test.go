package testenv

import (
	"reflect"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

func TestRealtimeCommand(t *testing.T) {
	for _, c := range []struct {
		rt   Realtime
		want []string
	}{
		{Realtime{}, []string{"prog", "-x"}},
		{Realtime{Priority: 10}, []string{"chrt", "-f", "10", "prog", "-x"}},
		{Realtime{Priority: 5, CPUs: "1"}, []string{"taskset", "-c", "1", "chrt", "-f", "5", "prog", "-x"}},
	} {
		if got := c.rt.Command("prog", "-x"); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%v: %q, want %q", c.rt, got, c.want)
		}
	}
}

func TestParseCPUList(t *testing.T) {
	set, err := parseCPUList("0,2-3")
	if err != nil {
		t.Fatal(err)
	}
	if set.Count() != 3 || !set.IsSet(0) || set.IsSet(1) || !set.IsSet(2) || !set.IsSet(3) {
		t.Errorf("0,2-3 parsed as %v", set)
	}
	for _, bad := range []string{"", "a", "3-1", "-1", "1,"} {
		if _, err := parseCPUList(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestLockThreadRestoresAffinity: the thread runs on the CPU asked for
// and gets its old affinity back (affinity needs no privilege; the
// real-time part is exercised by the OVS integration tests).
func TestLockThreadRestoresAffinity(t *testing.T) {
	var before unix.CPUSet
	if err := unix.SchedGetaffinity(0, &before); err != nil {
		t.Fatal(err)
	}
	cpu := -1
	for c := 0; c < 1024; c++ {
		if before.IsSet(c) {
			cpu = c
		}
	}
	if cpu < 0 {
		t.Fatal("no CPU in this thread's affinity")
	}
	restore, err := Realtime{CPUs: strconv.Itoa(cpu)}.LockThread()
	if err != nil {
		t.Fatal(err)
	}
	var during unix.CPUSet
	if err := unix.SchedGetaffinity(0, &during); err != nil {
		t.Fatal(err)
	}
	if err := restore(); err != nil {
		t.Fatal(err)
	}
	if during.Count() != 1 || !during.IsSet(cpu) {
		t.Errorf("affinity while locked %v, want only CPU %d", during, cpu)
	}
}
