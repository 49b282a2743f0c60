package probes

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func secs(vs ...float64) []time.Duration {
	out := make([]time.Duration, len(vs))
	for i, v := range vs {
		out[i] = time.Duration(v * float64(time.Second))
	}
	return out
}

func TestBuiltinProfiles(t *testing.T) {
	tests := []struct {
		name          string
		p             TimerProfile
		synEdges      []time.Duration
		dataTimeouts  []time.Duration
		dataRetx      []time.Duration
		dataGiveUp    time.Duration
		wantValidated bool
	}{
		{
			name:         "berkeley",
			p:            Berkeley(),
			synEdges:     secs(5.8, 24, 75),
			dataTimeouts: secs(1.5, 3, 6, 12, 24, 48, 64, 64, 64, 64, 64, 64, 64),
			dataRetx:     secs(1.5, 4.5, 10.5, 22.5, 46.5, 94.5, 158.5, 222.5, 286.5, 350.5, 414.5, 478.5),
			dataGiveUp:   secs(542.5)[0], // TCP/IP Illustrated: "a total of 542.5 seconds"
		},
		{
			name:         "linux",
			p:            Linux(),
			synEdges:     secs(1, 3, 7, 15, 31, 63, 127),
			dataTimeouts: secs(1, 2, 4, 8, 16, 32, 64, 120, 120, 120, 120, 120, 120, 120, 120, 120),
			dataRetx:     secs(1, 3, 7, 15, 31, 63, 127, 247, 367, 487, 607, 727, 847, 967, 1087),
			dataGiveUp:   secs(1207)[0],
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.p.Validate(); err != nil {
				t.Fatalf("built-in profile invalid: %v", err)
			}
			if got := Bins(tc.p, KindSYN); !slices.Equal(got, tc.synEdges) {
				t.Errorf("SYN edges = %v, want %v", got, tc.synEdges)
			}
			if got := tc.p.DataRTO.Timeouts(); !slices.Equal(got, tc.dataTimeouts) {
				t.Errorf("data timeouts = %v, want %v", got, tc.dataTimeouts)
			}
			if got := tc.p.DataRetransmits(); !slices.Equal(got, tc.dataRetx) {
				t.Errorf("data retransmits = %v, want %v", got, tc.dataRetx)
			}
			if got := tc.p.DataGiveUp(); got != tc.dataGiveUp {
				t.Errorf("data give-up = %v, want %v", got, tc.dataGiveUp)
			}
			if got := Bins(tc.p, KindData); !slices.Equal(got, append(slices.Clone(tc.dataRetx), tc.dataGiveUp)) {
				t.Errorf("data edges = %v", got)
			}
		})
	}
}

func TestDataRTOClamps(t *testing.T) {
	// Initial below Min is raised to Min; doubling stops at Max.
	r := DataRTO{Initial: 100 * time.Millisecond, Min: 200 * time.Millisecond, Max: 500 * time.Millisecond, Retries: 3}
	want := []time.Duration{200 * time.Millisecond, 400 * time.Millisecond, 500 * time.Millisecond, 500 * time.Millisecond}
	if got := r.Timeouts(); !slices.Equal(got, want) {
		t.Fatalf("Timeouts = %v, want %v", got, want)
	}
}

func TestProfilesAreIndependentCopies(t *testing.T) {
	a := Berkeley()
	a.SYN[0] = time.Hour
	if Berkeley().SYN[0] != 5800*time.Millisecond {
		t.Fatal("mutating a returned profile changed the built-in")
	}
	user := TimerProfile{Name: "x", SYN: secs(1), SYNGiveUp: time.Minute, DataRTO: Linux().DataRTO}
	got, err := ProfileByName("X", user)
	if err != nil {
		t.Fatal(err)
	}
	got.SYN[0] = time.Hour
	if user.SYN[0] != time.Second {
		t.Fatal("ProfileByName returned an alias of the caller's slice")
	}
}

func TestProfileByName(t *testing.T) {
	user := TimerProfile{Name: "solaris", SYN: secs(3), SYNGiveUp: time.Minute, DataRTO: Linux().DataRTO}
	tests := []struct {
		name, want string
		wantErr    string
	}{
		{name: "berkeley", want: "berkeley"},
		{name: "Linux", want: "linux"},
		{name: "solaris", want: "solaris"},
		{name: "bsd", wantErr: `unknown timer profile "bsd" (known: solaris, berkeley, linux)`},
	}
	for _, tc := range tests {
		p, err := ProfileByName(tc.name, user)
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("%s: err = %v, want %q", tc.name, err, tc.wantErr)
			}
			continue
		}
		if err != nil || p.Name != tc.want {
			t.Errorf("%s: got %q, %v", tc.name, p.Name, err)
		}
	}
}

func TestValidate(t *testing.T) {
	good := Berkeley
	tests := []struct {
		name    string
		mutate  func(*TimerProfile)
		wantErr []string // substrings; nil means valid
	}{
		{"ok", func(*TimerProfile) {}, nil},
		{"no SYN retransmissions is allowed", func(p *TimerProfile) { p.SYN = nil }, nil},
		{"empty name", func(p *TimerProfile) { p.Name = " " }, []string{"name is empty"}},
		{"zero syn", func(p *TimerProfile) { p.SYN[0] = 0 }, []string{"syn[0] = 0s must be positive"}},
		{"not increasing", func(p *TimerProfile) { p.SYN = secs(5.8, 5.8) }, []string{"syn[1] = 5.8s must be after syn[0] = 5.8s"}},
		{"give-up before last", func(p *TimerProfile) { p.SYNGiveUp = 20 * time.Second }, []string{"syn_give_up = 20s must be after the last SYN retransmission (24s)"}},
		{"no give-up", func(p *TimerProfile) { p.SYNGiveUp = 0 }, []string{"syn_give_up = 0s must be positive"}},
		{"rto bounds", func(p *TimerProfile) { p.DataRTO.Max = 500 * time.Millisecond }, []string{"data_rto.max = 500ms must not be below data_rto.min = 1s"}},
		{"rto zero", func(p *TimerProfile) { p.DataRTO.Initial, p.DataRTO.Min = 0, 0 }, []string{"data_rto.initial = 0s must be positive", "data_rto.min = 0s must be positive"}},
		{"retries", func(p *TimerProfile) { p.DataRTO.Retries = -1 }, []string{"data_rto.retries = -1 must be in [0, 64]"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := good()
			tc.mutate(&p)
			err := p.Validate()
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("invalid profile accepted")
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestLoadProfiles(t *testing.T) {
	const valid = `
profiles:
  - name: solaris
    syn: [3s, 9s, 21s]
    syn_give_up: 75
    data_rto: {initial: 1.5, min: 200ms, max: 60s, retries: 4}
  - name: impatient
    syn: []
    syn_give_up: 2.5s
    data_rto:
      initial: 300ms
      min: 300ms
      max: 1s
      retries: 0
`
	ps, err := LoadProfiles(strings.NewReader(valid))
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 {
		t.Fatalf("got %d profiles", len(ps))
	}
	sol := ps[0]
	if sol.Name != "solaris" || !slices.Equal(sol.SYN, secs(3, 9, 21)) || sol.SYNGiveUp != 75*time.Second ||
		sol.DataRTO != (DataRTO{Initial: 1500 * time.Millisecond, Min: 200 * time.Millisecond, Max: time.Minute, Retries: 4}) {
		t.Fatalf("solaris = %+v", sol)
	}
	if got := Bins(ps[1], KindSYN); !slices.Equal(got, secs(2.5)) {
		t.Fatalf("impatient SYN edges = %v", got)
	}
	if got := Bins(ps[1], KindData); !slices.Equal(got, secs(0.3)) {
		t.Fatalf("impatient data edges = %v", got)
	}
	p, err := ProfileByName("solaris", ps...)
	if err != nil || p.SYNGiveUp != 75*time.Second {
		t.Fatalf("ProfileByName over loaded profiles: %v %v", p, err)
	}
}

func TestLoadProfilesInvalid(t *testing.T) {
	const rto = "    data_rto: {initial: 1s, min: 1s, max: 2s, retries: 1}\n"
	tests := []struct {
		name, yaml, wantErr string
	}{
		{"empty", "", "empty document"},
		{"no profiles", "profiles: []\n", `no entries under "profiles"`},
		{"unknown field", "profiles:\n  - name: a\n    syn_giveup: 75s\n", "field syn_giveup not found"},
		{"bad duration", "profiles:\n  - name: a\n    syn: [5.8 s]\n", `line 3: "5.8 s" is not a duration`},
		{"list for duration", "profiles:\n  - name: a\n    syn_give_up: [1]\n", "line 3: want a duration such as 5.8s, got a list"},
		{"decreasing", "profiles:\n  - name: a\n    syn: [24s, 5.8s]\n    syn_give_up: 75s\n" + rto,
			`line 2: timer profile "a": syn[1] = 5.8s must be after syn[0] = 24s`},
		{"negative", "profiles:\n  - name: a\n    syn: [-1s]\n    syn_give_up: 75s\n" + rto, "syn[0] = -1s must be positive"},
		{"missing rto", "profiles:\n  - name: a\n    syn_give_up: 75s\n", "data_rto.initial = 0s must be positive"},
		{"builtin name", "profiles:\n  - name: Berkeley\n    syn_give_up: 75s\n" + rto, `line 2: "Berkeley" is a built-in profile name`},
		{"duplicate", "profiles:\n  - name: a\n    syn_give_up: 75s\n" + rto + "  - name: A\n    syn_give_up: 75s\n" + rto,
			`line 5: profile "A" already defined at line 2`},
		{"not yaml", "profiles: [", "timer profiles: yaml"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadProfiles(strings.NewReader(tc.yaml))
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %q lacks %q", err, tc.wantErr)
			}
		})
	}
}

func TestLoadProfilesFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "timers.yaml")
	body := "profiles:\n  - name: a\n    syn: [1s]\n    syn_give_up: 3s\n    data_rto: {initial: 1s, min: 1s, max: 2s, retries: 1}\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	ps, err := LoadProfilesFile(path)
	if err != nil || len(ps) != 1 || ps[0].Name != "a" {
		t.Fatalf("LoadProfilesFile = %v, %v", ps, err)
	}
	_, err = LoadProfilesFile(filepath.Join(dir, "missing.yaml"))
	if err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Fatalf("missing file error = %v", err)
	}
}

func TestLinuxLinearProfile(t *testing.T) {
	p, err := ProfileByName("linux-linear")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	edges := Bins(p, KindSYN)
	if edges[0] != time.Second || edges[1] != 2*time.Second {
		t.Fatalf("first SYN bin edges = %v, want 1 s then 2 s (linear timeouts)", edges[:2])
	}
	// 1.5 s is one retransmission under linear timeouts, one under classic
	// Linux too; 3.5 s is three here but only two (1 s, 3 s) classically.
	if n, _ := Retransmissions(p, KindSYN, 3500*time.Millisecond); n != 3 {
		t.Errorf("linux-linear: 3.5 s implies %d SYN retransmissions, want 3", n)
	}
	if n, _ := Retransmissions(Linux(), KindSYN, 3500*time.Millisecond); n != 2 {
		t.Errorf("linux: 3.5 s implies %d SYN retransmissions, want 2", n)
	}
	if _, failed := Retransmissions(p, KindSYN, 11*time.Second); !failed {
		t.Error("linux-linear: 11 s should be past the give-up time")
	}
}
