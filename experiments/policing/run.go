package policing

import (
	"fmt"
	"log/slog"
	"sort"
	"time"

	"github.com/pseudocong/pseudocong/netsim"
)

// Cell is one transfer of the experiment.
type Cell struct {
	// Group names the cell's family in the summary: a CC name for the
	// main matrix ("cubic", "bbr"), "bbr_client" for BBR on the client
	// only, "e2e" for §6's check.
	Group  string
	Mode   string
	Server string
	Upload bool
	// ClientCC and ServerCC are each end's congestion control; the sender
	// is the client on uploads.
	ClientCC, ServerCC string
	// ExtraRTT is added to the WAN hop (the e2e check's 60 ms).
	ExtraRTT time.Duration
	Bytes    int
	Duration time.Duration
	Omit     time.Duration
}

// Dir is "up" or "down".
func (c Cell) Dir() string {
	if c.Upload {
		return "up"
	}
	return "down"
}

// SenderCC is the sending end's algorithm.
func (c Cell) SenderCC() string {
	if c.Upload {
		return c.ClientCC
	}
	return c.ServerCC
}

// Key is the cell's summary prefix below policing.<backend>: the first
// server's cells are the headline keys (<group>.<mode>.<dir>), every
// server's are under server.<name>.
func (c Cell) Key(headline bool) string {
	k := fmt.Sprintf("%s.%s.%s", c.Group, c.Mode, c.Dir())
	if c.Group == "e2e" {
		k = "e2e." + c.Dir()
	}
	if headline {
		return k
	}
	return "server." + c.Server + "." + k
}

// Cells lists the experiment: for every server, CC and mode, both
// directions with the CC at both ends; BBR on the client only (server
// CUBIC) in every mode; the e2e check on the first server.
func (s *Spec) Cells() []Cell {
	var cells []Cell
	d, o := s.Duration.D(), s.Omit.D()
	for _, srv := range s.Servers {
		for _, m := range s.Modes {
			for _, up := range []bool{true, false} {
				for _, cc := range []string{"cubic", "bbr"} {
					cells = append(cells, Cell{Group: cc, Mode: m.Name, Server: srv, Upload: up, ClientCC: cc, ServerCC: cc, Duration: d, Omit: o})
				}
				cells = append(cells, Cell{Group: "bbr_client", Mode: m.Name, Server: srv, Upload: up, ClientCC: "bbr", ServerCC: "cubic", Duration: d, Omit: o})
			}
		}
	}
	if e := s.E2E; e.Mode != "" {
		for _, up := range []bool{true, false} {
			cells = append(cells, Cell{Group: "e2e", Mode: e.Mode, Server: s.Servers[0], Upload: up, ClientCC: e.CC, ServerCC: e.CC,
				ExtraRTT: e.ExtraRTT.D(), Bytes: e.Bytes, Duration: e.Limit.D()})
		}
	}
	return cells
}

// Backend runs cells: the simulator or live Linux TCP through switch
// processes.
type Backend interface {
	Name() string
	// Run runs the cells, all on path (one server, one mode); the path
	// is the same for every call until Close.
	Run(path *Path, cells []Cell, spec *Spec) ([]*FlowResult, error)
}

// Options select what Run runs.
type Options struct {
	// Select, if set, keeps only the cells it returns true for.
	Select func(Cell) bool
	// Adjust, if set, may change a selected cell (its duration, say)
	// before it runs.
	Adjust func(*Cell)
	Log    *slog.Logger
}

// Result is a run's outcome: the summary and the throughput series.
type Result struct {
	Backend string                `json:"backend"`
	Summary map[string]float64    `json:"summary"`
	Series  map[string][]float64  `json:"-"`
	Cells   map[string]FlowResult `json:"-"`
	Bin     time.Duration         `json:"-"`
}

// Run runs the spec's cells on one backend.
func Run(s *Spec, b Backend, opts Options) (*Result, error) {
	plan, err := s.Plan()
	if err != nil {
		return nil, err
	}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	type pathKey struct {
		server, mode string
		extra        time.Duration
	}
	groups := map[pathKey][]Cell{}
	var keys []pathKey
	for _, c := range s.Cells() {
		if opts.Select != nil && !opts.Select(c) {
			continue
		}
		if opts.Adjust != nil {
			opts.Adjust(&c)
		}
		k := pathKey{c.Server, c.Mode, c.ExtraRTT}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], c)
	}
	res := &Result{Backend: b.Name(), Summary: map[string]float64{}, Series: map[string][]float64{}, Cells: map[string]FlowResult{}, Bin: s.Bin.D()}
	for _, k := range keys {
		m, _ := s.Mode(k.mode)
		p, err := s.ModePath(plan, k.server, m)
		if err != nil {
			return nil, err
		}
		if k.extra > 0 {
			p = p.WithExtraRTT(func(h Hop) bool { return isCPEWAN(plan, s.CPE, h) }, k.extra)
		}
		cells := groups[k]
		log.Info("policing cells", "backend", b.Name(), "server", k.server, "mode", k.mode, "cells", len(cells), "rtt", p.BaseRTT(), "host_jitter", s.HostJitter.D())
		out, err := b.Run(p, cells, s)
		if err != nil {
			return nil, fmt.Errorf("policing %s %s/%s: %w", b.Name(), k.server, k.mode, err)
		}
		for i, c := range cells {
			r := out[i]
			for _, headline := range []bool{true, false} {
				if headline && c.Server != s.Servers[0] {
					continue
				}
				key := "policing." + b.Name() + "." + c.Key(headline)
				res.Summary[key+".goodput_mbps"] = r.GoodputMbps
				res.Summary[key+".retransmits"] = float64(r.Retransmits)
				res.Summary[key+".retransmits_all"] = float64(r.RetransmitsAll)
				if c.Bytes > 0 {
					res.Summary[key+".completion_s"] = r.CompletionS
				}
				if headline {
					res.Series[key] = r.Series
					res.Cells[key] = *r
				}
			}
		}
	}
	return res, nil
}

func isCPEWAN(plan *netsim.Plan, cpe string, h Hop) bool {
	ci, ok := plan.Switch(cpe)
	return ok && h.From.Kind == netsim.NodeSwitch && h.From.Node == ci && h.To.Kind == netsim.NodeSwitch
}

// SortedKeys lists a summary's keys in order.
func SortedKeys(m map[string]float64) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// Sim is the simulator backend.
type Sim struct{}

// Name is "sim".
func (Sim) Name() string { return "sim" }

// Run runs each cell on the virtual clock.
func (Sim) Run(p *Path, cells []Cell, s *Spec) ([]*FlowResult, error) {
	out := make([]*FlowResult, len(cells))
	for i, c := range cells {
		r, err := RunSim(Flow{Path: p, Upload: c.Upload, SenderCC: c.SenderCC(), MSS: s.MSS, Duration: c.Duration, Omit: c.Omit,
			Bytes: c.Bytes, Bin: s.Bin.D(), Seed: s.Seed, HostJitter: s.HostJitter.D()})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Key(false), err)
		}
		out[i] = r
	}
	return out, nil
}
