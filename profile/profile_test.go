package profile

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/pseudocong/pseudocong/agent"
	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/tcam"
)

func TestBuiltinsLoadAndValidate(t *testing.T) {
	names := Names()
	if !slices.Equal(names, []string{"ideal", "pica8-p3297"}) {
		t.Fatalf("built-in profiles %v", names)
	}
	for _, name := range names {
		p, err := Load(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if p.Name != name || p.Source != "builtin:"+name {
			t.Errorf("%s: name %q source %q", name, p.Name, p.Source)
		}
		if _, err := agent.New(clock.NewSim(time.Time{}), p.Agent, agent.OutputFunc(func([]agent.PacketIn) {}), nil); err != nil {
			t.Errorf("%s: agent.New: %v", name, err)
		}
		if _, err := p.TCAMLayout(); err != nil {
			t.Errorf("%s: layout: %v", name, err)
		}
	}
}

// The Pica8 numbers are the calibrated ones of CALIBRATION-NOTES.md and
// paper 000 §2.1; a stray edit of the YAML fails here.
func TestPica8Constants(t *testing.T) {
	p, err := Load("pica8-p3297")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"packet_in_cost", p.Agent.PacketInCost, 4200 * time.Microsecond},
		{"batch_size", p.Agent.BatchSize, 25},
		{"flush_period > B·p", p.Agent.FlushPeriod > time.Duration(p.Agent.BatchSize)*p.Agent.PacketInCost, true},
		{"miss_queue_limit ≥ 381", p.Agent.MissQueueLimit >= 381, true},
		{"capacity", p.TCAM.Capacity, 4000},
		{"layout", p.TCAM.Layout, "highest-first"},
		{"driver_per_write", p.TCAM.Timing.DriverPerWrite, 300 * time.Microsecond},
		{"driver_per_move", p.TCAM.Timing.DriverPerMove, 14400 * time.Nanosecond},
		{"slow_move_free_slots", p.TCAM.Timing.SlowMoveFreeSlots, 50},
		{"driver_per_slow_move", p.TCAM.Timing.DriverPerSlowMove, 70 * time.Microsecond},
		{"flush_period", p.Agent.FlushPeriod, 120 * time.Millisecond},
		{"hit_delay", p.Forwarding.HitDelay, 50 * time.Microsecond},
		{"backing_table.capacity", p.BackingTable.Capacity, 65536},
		{"backing_table.eviction", p.BackingTable.Eviction, "lru"},
		{"backing_table.swap_in_upcall", p.BackingTable.SwapInUpcall != nil && *p.BackingTable.SwapInUpcall, true},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

// Every built-in file states every knob: nothing is left to a zero value by
// omission.
func TestBuiltinsSetEveryKey(t *testing.T) {
	want := yamlKeys(reflect.TypeOf(Profile{}), "")
	for _, name := range Names() {
		data, err := builtin.ReadFile("builtin/" + name + ".yaml")
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := yaml.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		got := docKeys(doc, "")
		for _, k := range want {
			if !slices.Contains(got, k) {
				t.Errorf("%s: key %s not set", name, k)
			}
		}
	}
}

func yamlKeys(t reflect.Type, prefix string) []string {
	var keys []string
	for i := range t.NumField() {
		f := t.Field(i)
		tag := strings.Split(f.Tag.Get("yaml"), ",")[0]
		// provenance is optional: only measured profiles (pseudocong
		// calibrate) have one.
		if tag == "-" || tag == "" || tag == "provenance" {
			continue
		}
		if f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeOf(time.Time{}) {
			keys = append(keys, yamlKeys(f.Type, prefix+tag+".")...)
			continue
		}
		keys = append(keys, prefix+tag)
	}
	return keys
}

func docKeys(m map[string]any, prefix string) []string {
	var keys []string
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok {
			keys = append(keys, docKeys(sub, prefix+k+".")...)
			continue
		}
		keys = append(keys, prefix+k)
	}
	return keys
}

func TestLoadErrors(t *testing.T) {
	valid, err := builtin.ReadFile("builtin/pica8-p3297.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	edit := func(old, new string) string {
		if !strings.Contains(string(valid), old) {
			t.Fatalf("fixture: %q not in the pica8 profile", old)
		}
		return strings.Replace(string(valid), old, new, 1)
	}
	for _, tc := range []struct {
		name, arg, wantErr string
	}{
		{"unknown name lists the built-ins", "pica9", "built-in: ideal, pica8-p3297"},
		{"missing file", filepath.Join(dir, "nope.yaml"), "no such file"},
		{"unknown key", write("typo.yaml", edit("batch_size: 25", "batch_sise: 25")), "batch_sise"},
		{"bare number duration", write("num.yaml", edit("packet_in_cost: 4.2ms", "packet_in_cost: 4200")), "time.Duration"},
		{"bad duration", write("dur.yaml", edit("hit_delay: 50us", "hit_delay: fast")), "`fast` into time.Duration"},
		{"agent validation", write("b0.yaml", edit("batch_size: 25", "batch_size: 0")), "batch_size 0"},
		{"layout validation", write("lay.yaml", edit("layout: highest-first", "layout: sideways")), "sideways"},
		{"tcam capacity", write("cap.yaml", edit("capacity: 4000", "capacity: 0")), "tcam.capacity"},
		{"backing capacity", write("bcap.yaml", edit("capacity: 65536", "capacity: -1")), "backing_table.capacity -1"},
		{"eviction policy", write("ev.yaml", edit("eviction: lru", "eviction: random")), "backing_table.eviction"},
		{"negative latency", write("lat.yaml", edit("latency: 100us", "latency: -1ms")), "controller_channel.latency"},
		{"empty", write("empty.yaml", ""), "empty document"},
		{"two documents", write("two.yaml", string(valid)+"\n---\nname: x\n"), "more than one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(tc.arg)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Load(%q) error %v, want one containing %q", tc.arg, err, tc.wantErr)
			}
		})
	}
	// backing_table is optional: without it the data plane's defaults
	// apply (zero values here).
	start := strings.Index(string(valid), "backing_table:")
	end := strings.Index(string(valid), "forwarding:")
	if start < 0 || end < start {
		t.Fatal("fixture: backing_table section not before forwarding in the pica8 profile")
	}
	noBacking := write("nobacking.yaml", string(valid[:start])+string(valid[end:]))
	if got, err := Load(noBacking); err != nil {
		t.Errorf("Load without backing_table: %v", err)
	} else if got.BackingTable != (BackingTable{}) {
		t.Errorf("Load without backing_table: section %+v, want zero", got.BackingTable)
	}
	// A valid file loads by path, with its path as Source.
	p := write("mine.yaml", edit("name: pica8-p3297", "name: mine"))
	got, err := Load(p)
	if err != nil || got.Name != "mine" || got.Source != p {
		t.Errorf("Load(%q) = %+v, %v", p, got, err)
	}
}

// Every TCAM layout and every Packet-In scheduling policy is selectable by
// name in a profile file, and builds a working pipeline configuration.
func TestLayoutsAndPoliciesSelectable(t *testing.T) {
	valid, err := builtin.ReadFile("builtin/pica8-p3297.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	load := func(name, body string) (*Profile, error) {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return Load(p)
	}
	for _, name := range append(tcam.LayoutNames(), "gap-1", "gap-64") {
		body := strings.Replace(string(valid), "layout: highest-first", "layout: "+name, 1)
		p, err := load("l.yaml", body)
		if err != nil {
			t.Errorf("layout %s: %v", name, err)
			continue
		}
		l, err := p.TCAMLayout()
		if err != nil || l.Name() != name {
			t.Errorf("layout %s: TCAMLayout() = %v, %v", name, l, err)
		}
	}
	for _, bad := range []string{"gap-0", "gap-x", "gap-08"} {
		body := strings.Replace(string(valid), "layout: highest-first", "layout: "+bad, 1)
		if _, err := load("b.yaml", body); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("layout %s: error %v", bad, err)
		}
	}
	for _, pol := range agent.Policies() {
		body := strings.Replace(string(valid), "scheduling: install_first", "scheduling: "+string(pol), 1)
		if pol == agent.RateLimited {
			body = strings.Replace(body, "controller_rate_limit: 0", "controller_rate_limit: 1000", 1)
		}
		p, err := load("s.yaml", body)
		if err != nil {
			t.Errorf("scheduling %s: %v", pol, err)
			continue
		}
		if p.Agent.Scheduling != pol {
			t.Errorf("scheduling %s: loaded %s", pol, p.Agent.Scheduling)
		}
	}
	body := strings.Replace(string(valid), "scheduling: install_first", "scheduling: rate_limited", 1)
	if _, err := load("r.yaml", body); err == nil || !strings.Contains(err.Error(), "at least 100") {
		t.Errorf("rate_limited without a rate: %v", err)
	}
}

// The upcall latency moves from Latency (back-to-back misses) to
// IdleLatency as the gap grows, 1 − 1/e of the way at one time constant;
// without the idle keys it is Latency at every gap.
func TestUpcallDelay(t *testing.T) {
	u := Upcall{Latency: 100 * time.Microsecond, IdleLatency: 500 * time.Microsecond, IdleTimeConstant: 10 * time.Millisecond}
	for _, c := range []struct {
		gap, want time.Duration
	}{
		{0, 100 * time.Microsecond},
		{10 * time.Millisecond, 100*time.Microsecond + 252848}, // 400 µs · (1 − 1/e)
		{time.Second, 500 * time.Microsecond},
		{-1, 500 * time.Microsecond},
	} {
		if got := u.Delay(c.gap); got < c.want-time.Microsecond || got > c.want+time.Microsecond {
			t.Errorf("Delay(%v) = %v, want %v", c.gap, got, c.want)
		}
	}
	flat := Upcall{Latency: 70 * time.Microsecond}
	if got := flat.Delay(time.Second); got != 70*time.Microsecond {
		t.Errorf("without idle keys Delay = %v, want the constant 70µs", got)
	}
	if got := (Upcall{}).Delay(-1); got != 0 {
		t.Errorf("zero Upcall delays a miss by %v", got)
	}
}
