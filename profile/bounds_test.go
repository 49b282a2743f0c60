package profile

import (
	"math"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// numericKeys lists the YAML keys of every numeric field of a profile
// (ints, floats, durations), found by reflection so that a key added later
// is tested (and must be bounded) without editing this file.
func numericKeys(t reflect.Type, prefix string) map[string]numKind {
	keys := map[string]numKind{}
	durType := reflect.TypeOf(time.Duration(0))
	for i := range t.NumField() {
		f := t.Field(i)
		tag := strings.Split(f.Tag.Get("yaml"), ",")[0]
		if tag == "-" || tag == "" {
			continue
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case ft == durType:
			keys[prefix+tag] = durKind
		case ft.Kind() == reflect.Struct:
			for k, v := range numericKeys(ft, prefix+tag+".") {
				keys[k] = v
			}
		case ft.Kind() == reflect.Float64 || ft.Kind() == reflect.Float32:
			keys[prefix+tag] = floatKind
		case ft.Kind() >= reflect.Int && ft.Kind() <= reflect.Uint64:
			keys[prefix+tag] = intKind
		}
	}
	return keys
}

type numKind int

const (
	intKind numKind = iota
	floatKind
	durKind
)

// absurd returns the out-of-range values tried for a key of that kind, as
// YAML values: far too large (what a unit slip gives: the 1e15 of the
// makeslice panic) and negative.
func absurd(kind numKind) []any {
	switch kind {
	case durKind:
		return []any{"2000000h", "-1ns"}
	case floatKind:
		return []any{1e300, -1.0, math.NaN(), math.Inf(1)}
	default:
		return []any{int64(1e9), int64(1e15), int64(-1)}
	}
}

// setKey sets a dotted key in a decoded YAML document.
func setKey(t *testing.T, doc map[string]any, key string, v any) {
	t.Helper()
	parts := strings.Split(key, ".")
	m := doc
	for _, p := range parts[:len(parts)-1] {
		sub, ok := m[p].(map[string]any)
		if !ok {
			t.Fatalf("fixture: no section %s for %s", p, key)
		}
		m = sub
	}
	m[parts[len(parts)-1]] = v
}

// Every numeric key with an absurd value is refused by Parse with an error
// that names the key, its value and the allowed range, without a panic or
// a large allocation (batch_size 1e9 used to run out of memory and 1e15 to
// panic in makeslice once the agent was built; tcam.capacity 1e10 failed
// only at run time).
func TestEveryNumericKeyIsBounded(t *testing.T) {
	src, err := builtin.ReadFile("builtin/pica8-p3297.yaml")
	if err != nil {
		t.Fatal(err)
	}
	keys := numericKeys(reflect.TypeOf(Profile{}), "")
	// 22 when this was written (agent 7, tcam 12, backing_table,
	// forwarding and controller_channel 1 each): a floor that catches a
	// broken reflection, not a census.
	if len(keys) < 20 {
		t.Fatalf("found only %d numeric keys: %v", len(keys), keys)
	}
	t.Logf("%d numeric keys", len(keys))
	for key, kind := range keys {
		for _, v := range absurd(kind) {
			var doc map[string]any
			if err := yaml.Unmarshal(src, &doc); err != nil {
				t.Fatal(err)
			}
			setKey(t, doc, key, v)
			data, err := yaml.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err = Parse(data, "test")
			runtime.ReadMemStats(&after)
			if err == nil {
				t.Errorf("%s: %v: accepted", key, v)
				continue
			}
			msg := err.Error()
			if !strings.Contains(msg, key+" ") || !strings.Contains(msg, "must be in [") {
				t.Errorf("%s: %v: error does not name the key and its range: %v", key, v, err)
			}
			// Parsing allocates kilobytes; a megabyte-scale jump would mean a
			// value sized an allocation. (TotalAlloc only grows: other
			// goroutines of this test binary allocate next to nothing.)
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
				t.Errorf("%s: %v: parsing allocated %d bytes", key, v, grew)
			}
		}
	}
}

// The bounds admit the calibrated profiles with room to spare, and the
// values at the very bounds.
func TestBoundsAdmitTheirLimits(t *testing.T) {
	for _, name := range Names() {
		if _, err := Load(name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	p, err := Load("pica8-p3297")
	if err != nil {
		t.Fatal(err)
	}
	p.Agent.BatchSize = MaxBatchSize
	p.Agent.MissQueueLimit = MaxQueueLimit
	p.Agent.JobQueueLimit = MaxQueueLimit
	p.Agent.RateLimit = MaxRateLimit
	p.Agent.BurstLimit = MaxQueueLimit
	p.Agent.PacketInCost = MaxOpCost
	p.Agent.FlushPeriod = MaxFlushPeriod
	p.TCAM.Capacity = MaxTCAMCapacity
	p.TCAM.Timing.ClockHz = MinClockHz
	p.TCAM.Timing.CyclesPerWrite = MaxCyclesPerOp
	p.TCAM.Timing.DriverPerMove = MaxOpCost
	p.TCAM.Timing.SlowMoveFreeSlots = MaxTCAMCapacity
	p.BackingTable.Capacity = MaxBackingCapacity
	p.Forwarding.HitDelay = MaxOpCost
	p.ControllerChannel.Latency = MaxChannelLatency
	if err := p.Validate(); err != nil {
		t.Errorf("values at the bounds: %v", err)
	}
	p.TCAM.Capacity = 100
	p.TCAM.Timing.SlowMoveFreeSlots = 101
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "tcam.timing.slow_move_free_slots 101: must be in [0, 100]") {
		t.Errorf("slow_move_free_slots beyond the capacity: %v", err)
	}
}

// One error per bad key: a bound error is not repeated by the component's
// own validation.
func TestBoundErrorsNotRepeated(t *testing.T) {
	p, err := Load("pica8-p3297")
	if err != nil {
		t.Fatal(err)
	}
	p.Agent.BatchSize = 0
	p.TCAM.Timing.CyclesPerRead = -1
	err = p.Validate()
	if err == nil {
		t.Fatal("accepted")
	}
	for _, k := range []string{"batch_size", "cycles_per_read"} {
		if n := strings.Count(err.Error(), k); n != 1 {
			t.Errorf("%s named %d times in %v", k, n, err)
		}
	}
}
