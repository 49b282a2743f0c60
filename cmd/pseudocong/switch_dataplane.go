package main

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pseudocong/pseudocong/profile"
	"github.com/pseudocong/pseudocong/softswitch"
	"github.com/pseudocong/pseudocong/softswitch/pipeline"
	"github.com/pseudocong/pseudocong/tcam"
)

// switchProfileHelp is the help text of `switch --profile`.
var switchProfileHelp = fmt.Sprintf("switch model: a built-in profile (%s) or a path to a profile YAML file (e.g. profiles/pica8-p3297.yaml); see docs/dataplane.md",
	strings.Join(profile.Names(), ", "))

// switchDataPlane is what `pseudocong switch` needs to build a switch
// modelled by a profile.
type switchDataPlane struct {
	profile *profile.Profile
	// backing is the backing table's capacity; tableCapacity is the flow
	// table's (TCAM + backing), for softswitch.Config.TableCapacity.
	backing, tableCapacity int
	// tieBreak is the profile's TCAM tie rule, for
	// softswitch.Config.TieBreak (pipeline.Attach checks it).
	tieBreak tcam.TieBreak
}

// loadSwitchDataPlane loads --profile. tableSize (--table-size) is the
// whole flow table and overrides the profile's backing_table.capacity; 0
// means the TCAM plus the profile's backing table (pipeline.BackingCapacity).
func loadSwitchDataPlane(profileArg string, tableSize int) (switchDataPlane, error) {
	return loadScaledDataPlane(profileArg, tableSize, 0)
}

// loadScaledDataPlane is loadSwitchDataPlane with --tcam-capacity: a
// positive tcamCapacity replaces the profile's tcam.capacity (the same
// timings on a smaller or larger chip, as the sim's tcp_bulk cells scale
// it, so that a handful of flows are more rules than entries); 0 keeps it.
func loadScaledDataPlane(profileArg string, tableSize, tcamCapacity int) (switchDataPlane, error) {
	p, err := profile.Load(profileArg)
	if err != nil {
		return switchDataPlane{}, usageErrorf("--profile: %w", err)
	}
	if tcamCapacity != 0 {
		if tcamCapacity < 0 || tcamCapacity > profile.MaxTCAMCapacity {
			return switchDataPlane{}, usageErrorf("--tcam-capacity %d: want 0 (the profile's) to %d", tcamCapacity, profile.MaxTCAMCapacity)
		}
		scaled := *p
		scaled.TCAM.Capacity = tcamCapacity
		// A slow-path threshold above the new size means "always the slow
		// path" (free slots never exceed the capacity), as the sim reads
		// it; the profile's bound wants it at most the capacity.
		scaled.TCAM.Timing.SlowMoveFreeSlots = min(scaled.TCAM.Timing.SlowMoveFreeSlots, tcamCapacity)
		if err := scaled.Validate(); err != nil {
			return switchDataPlane{}, usageErrorf("--tcam-capacity %d: %w", tcamCapacity, err)
		}
		p = &scaled
	}
	d := switchDataPlane{profile: p, backing: pipeline.BackingCapacity(p, 0)}
	if tableSize != 0 {
		if tableSize <= p.TCAM.Capacity || tableSize-p.TCAM.Capacity > profile.MaxBackingCapacity {
			return switchDataPlane{}, usageErrorf("--table-size %d: must be in [%d, %d]: more than the %d-entry TCAM of profile %s, at most %d more (the backing table's bound)",
				tableSize, p.TCAM.Capacity+1, p.TCAM.Capacity+profile.MaxBackingCapacity, p.TCAM.Capacity, p.Name, profile.MaxBackingCapacity)
		}
		d.backing = tableSize - p.TCAM.Capacity
	}
	d.tableCapacity = pipeline.TableCapacity(p, d.backing)
	d.tieBreak = pipeline.TieBreak(p)
	return d, nil
}

// attach installs the modelled data plane (agent, TCAM cache, backing
// table, hit delay) in the switch's seams.
func (d switchDataPlane) attach(sw *softswitch.Switch, reg prometheus.Registerer, log *slog.Logger) (*pipeline.Pipeline, error) {
	return pipeline.Attach(sw, pipeline.Options{
		Profile:         d.profile,
		BackingCapacity: d.backing,
		// The profile's backing_table.swap_in_upcall (on in the calibrated
		// model, docs/calibration.md): a packet whose rule is only in the
		// backing table first goes up to the CPU as a miss does.
		SwapInUpcall: pipeline.SwapInUpcall(d.profile),
		Registerer:   reg,
		Logger:       log,
	})
}
