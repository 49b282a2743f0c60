// Package grid is what the simulator's grid experiments that have a spec
// schema of their own (mptcp, vcc) share: the spec fields every grid has
// and their checks, the reduced grid's overrides, loading a built-in or
// file spec, running every (cell, seed, ...) job on a bounded pool in a
// fixed order, summary.json in the shape of package experiments' specs,
// and writing the output directory.
package grid

import (
	"fmt"
	"os"
	"time"

	"github.com/pseudocong/pseudocong/internal/yamldoc"
)

// Base is the part of a grid spec every grid has; a spec embeds it with
// `yaml:",inline"`.
type Base struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	KeyPrefix   string `yaml:"key_prefix"`
	Seed        uint64 `yaml:"seed"`  // first seed; cells run Seeds seeds from it
	Seeds       int    `yaml:"seeds"` // runs per cell
	// Every run lasts Duration; what it measures starts at Warmup.
	Duration time.Duration `yaml:"duration"`
	Warmup   time.Duration `yaml:"warmup"`
}

// Check validates the common fields.
func (b *Base) Check() error {
	switch {
	case b.Name == "":
		return fmt.Errorf("no name")
	case b.KeyPrefix == "":
		return fmt.Errorf("no key_prefix")
	case b.Seeds < 1:
		return fmt.Errorf("seeds %d: want at least 1", b.Seeds)
	case b.Duration <= 0 || b.Warmup < 0 || b.Warmup >= b.Duration:
		return fmt.Errorf("duration %v, warmup %v: want 0 ≤ warmup < duration", b.Duration, b.Warmup)
	}
	return nil
}

// Reduced is the part of a spec's `reduced:` overrides every grid has
// (fields left out keep the full grid's value); a spec's reduced block
// embeds it with `yaml:",inline"`.
type Reduced struct {
	Seeds    int           `yaml:"seeds"`
	Duration time.Duration `yaml:"duration"`
}

// Check validates the overrides against the full grid's b.
func (r *Reduced) Check(b *Base) error {
	if r.Seeds < 0 || r.Duration < 0 || r.Duration > 0 && r.Duration <= b.Warmup {
		return fmt.Errorf("reduced: seeds %d, duration %v: want ≥ 0 and a duration beyond the warmup", r.Seeds, r.Duration)
	}
	return nil
}

// Apply sets b's fields that r overrides.
func (r *Reduced) Apply(b *Base) {
	if r.Seeds > 0 {
		b.Seeds = r.Seeds
	}
	if r.Duration > 0 {
		b.Duration = r.Duration
	}
}

// Spec is what Load and Parse need of a grid spec type S: *S checks it.
type Spec[S any] interface {
	*S
	Check() error
}

// Load returns the built-in spec (builtin, parsed) when arg is name, or
// reads and checks the spec file at arg. name also prefixes the errors:
// `mptcp spec my.yaml: ...`.
func Load[S any, P Spec[S]](name string, builtin []byte, arg string) (*S, error) {
	if arg == name {
		return Parse[S, P](name, builtin, "builtin:"+name)
	}
	if !yamldoc.LooksLikePath(arg) {
		return nil, fmt.Errorf("%s spec %q: want %q (built in) or a path to a .yaml file", name, arg, name)
	}
	b, err := os.ReadFile(arg)
	if err != nil {
		return nil, fmt.Errorf("%s spec: %w", name, err)
	}
	return Parse[S, P](name, b, arg)
}

// Parse decodes one spec document strictly (unknown keys are errors) and
// checks it; source names it in errors.
func Parse[S any, P Spec[S]](name string, b []byte, source string) (*S, error) {
	s := new(S)
	if err := yamldoc.DecodeStrict(b, s); err != nil {
		return nil, fmt.Errorf("%s spec %s: %w", name, source, err)
	}
	if err := P(s).Check(); err != nil {
		return nil, fmt.Errorf("%s spec %s: %w", name, source, err)
	}
	return s, nil
}
