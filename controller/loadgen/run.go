package loadgen

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"
)

// Loop is one measurement interval.
type Loop struct {
	// PerSwitch is each switch's responses per second.
	PerSwitch []float64
	// Total is the sum over the switches, responses per second.
	Total  float64
	Warmup bool
}

// Result is a whole run. Min, Max, Avg and Stdev are over the loops that
// are not warmup, in responses per second.
type Result struct {
	Switches             int
	Mode                 Mode
	Loops                []Loop
	Min, Max, Avg, Stdev float64
	// Timeouts counts latency-mode PACKET_INs that got no answer within 1 s.
	Timeouts uint64
}

// Summary is cbench's last line:
// "RESULT: 16 switches 9 tests min/max/avg/stdev = a/b/c/d responses/s".
func (r *Result) Summary() string {
	n := 0
	for _, l := range r.Loops {
		if !l.Warmup {
			n++
		}
	}
	return fmt.Sprintf("RESULT: %d switches %d tests min/max/avg/stdev = %.2f/%.2f/%.2f/%.2f responses/s",
		r.Switches, n, r.Min, r.Max, r.Avg, r.Stdev)
}

// FormatLoop is cbench's per-loop line: responses per second of each switch
// and the total per millisecond.
func FormatLoop(l Loop) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%-3d switches: flows/sec: ", len(l.PerSwitch))
	for _, v := range l.PerSwitch {
		fmt.Fprintf(&sb, " %.0f", v)
	}
	fmt.Fprintf(&sb, "  total = %.6f per ms", l.Total/1000)
	if l.Warmup {
		sb.WriteString(" (warmup)")
	}
	return sb.String()
}

// Run connects the switches, runs the ARP phase, then Loops measurement
// loops of Duration each, and returns the responses per second.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	setupCtx, cancel := context.WithTimeout(ctx, cfg.SetupTimeout)
	defer cancel()
	deadline, _ := setupCtx.Deadline()

	switches := make([]*emuSwitch, cfg.Switches)
	defer func() {
		for _, s := range switches {
			if s != nil {
				_ = s.nc.Close()
			}
		}
	}()
	// Connect and set up all switches at once, as cbench does.
	errs := make(chan error, cfg.Switches)
	var wg sync.WaitGroup
	for i := range switches {
		s, err := dial(setupCtx, &cfg, i)
		if err != nil {
			return nil, err
		}
		switches[i] = s
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.setup(deadline); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, err
	}
	cfg.Logger.Info("load generator ready", "switches", cfg.Switches, "macs", cfg.MACs, "mode", cfg.Mode.String())

	// Responses of the ARP phase are not part of any loop.
	base := make([]uint64, len(switches))
	for i, s := range switches {
		base[i] = s.responses.Load()
	}
	stop := make(chan struct{})
	runErrs := make(chan error, len(switches))
	var runWG sync.WaitGroup
	for _, s := range switches {
		runWG.Add(1)
		go func() {
			defer runWG.Done()
			if err := s.run(stop); err != nil {
				runErrs <- err
			}
		}()
	}
	stopAll := func() {
		close(stop)
		for _, s := range switches {
			_ = s.nc.SetDeadline(time.Now())
		}
		runWG.Wait()
	}

	res := &Result{Switches: cfg.Switches, Mode: cfg.Mode}
	start := time.Now()
	for loop := range cfg.Loops + cfg.Warmup {
		select {
		case <-ctx.Done():
			stopAll()
			return nil, ctx.Err()
		case err := <-runErrs:
			stopAll()
			return nil, err
		case <-time.After(time.Until(start.Add(time.Duration(loop+1) * cfg.Duration))):
		}
		now := time.Now()
		elapsed := now.Sub(start.Add(time.Duration(loop) * cfg.Duration)).Seconds()
		l := Loop{PerSwitch: make([]float64, len(switches)), Warmup: loop < cfg.Warmup}
		for i, s := range switches {
			n := s.responses.Load()
			l.PerSwitch[i] = float64(n-base[i]) / elapsed
			l.Total += l.PerSwitch[i]
			base[i] = n
		}
		res.Loops = append(res.Loops, l)
		if cfg.Out != nil {
			fmt.Fprintln(cfg.Out, FormatLoop(l))
		}
	}
	stopAll()
	for _, s := range switches {
		res.Timeouts += s.timeouts.Load()
	}
	res.summarize()
	if cfg.Out != nil {
		fmt.Fprintln(cfg.Out, res.Summary())
	}
	return res, nil
}

func (r *Result) summarize() {
	var vals []float64
	for _, l := range r.Loops {
		if !l.Warmup {
			vals = append(vals, l.Total)
		}
	}
	if len(vals) == 0 {
		return
	}
	r.Min, r.Max = math.Inf(1), math.Inf(-1)
	sum := 0.0
	for _, v := range vals {
		r.Min, r.Max = math.Min(r.Min, v), math.Max(r.Max, v)
		sum += v
	}
	r.Avg = sum / float64(len(vals))
	ss := 0.0
	for _, v := range vals {
		ss += (v - r.Avg) * (v - r.Avg)
	}
	r.Stdev = math.Sqrt(ss / float64(len(vals)))
}
