package dataplane

import (
	"errors"
	"fmt"

	"github.com/pseudocong/pseudocong/tcam"
)

// Config sizes a Table.
type Config struct {
	// TCAMSlots is the TCAM's capacity (profile tcam.capacity).
	TCAMSlots int
	// Layout is the TCAM's placement policy (profile tcam.layout).
	Layout tcam.Layout
	// Timing prices chip operations (profile tcam.timing).
	Timing tcam.Timing
	// BackingCapacity bounds the rules held outside the TCAM; a change that
	// would need more fails with ErrFull. Must be at least 0 (0: the TCAM
	// is the whole table).
	BackingCapacity int
	// Eviction picks TCAM victims; nil means LRU.
	Eviction Eviction
}

// Validate reports every invalid field, joined into one error.
func (c Config) Validate() error {
	var errs []error
	if c.TCAMSlots < 1 {
		errs = append(errs, fmt.Errorf("tcam slots %d: must be at least 1", c.TCAMSlots))
	}
	if c.Layout == nil {
		errs = append(errs, errors.New("tcam layout: must be set"))
	}
	if err := c.Timing.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.BackingCapacity < 0 {
		errs = append(errs, fmt.Errorf("backing capacity %d: must not be negative", c.BackingCapacity))
	}
	if len(errs) > 0 {
		return fmt.Errorf("dataplane config: %w", errors.Join(errs...))
	}
	return nil
}
