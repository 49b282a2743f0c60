package pipeline

import (
	"errors"
	"fmt"
	"sync"

	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/softswitch"
	"github.com/pseudocong/pseudocong/softswitch/dataplane"
)

// preloadState is the placement requested by Preload, and what happened.
type preloadState struct {
	where dataplane.Location
	id    uint64
	added bool
	err   error
}

// Preload installs an ADD FLOW_MOD into the switch's flow table at once
// and places the new rule in the TCAM (dataplane.InTCAM) or only in the
// backing table (dataplane.InBacking), at no modelled cost and without the
// eviction policy: experiment set-up, such as paper 000's base load of L
// rules. It returns the new entry's ID.
//
// It bypasses the agent, so call it before traffic starts: on a clock.Sim
// before running the scheduler or from inside an event, on the wall clock
// while nothing else feeds the switch.
func (p *Pipeline) Preload(fm *openflow.FlowMod, where dataplane.Location) (uint64, error) {
	if fm.Command != openflow.FlowModAdd {
		return 0, fmt.Errorf("pipeline: preload: command %d is not ADD", fm.Command)
	}
	if where != dataplane.InTCAM && where != dataplane.InBacking {
		return 0, fmt.Errorf("pipeline: preload: location %v is not tcam or backing", where)
	}
	add := *fm
	add.BufferID = openflow.NoBuffer
	add.Flags &^= openflow.FlowModFlagEmerg
	p.mu.Lock()
	n, b := p.table.Len()
	tc, bc := p.table.Capacity()
	if (where == dataplane.InTCAM && n >= tc) || (where == dataplane.InBacking && b >= bc) {
		p.mu.Unlock()
		return 0, fmt.Errorf("pipeline: preload into %v (%d tcam / %d backing in use): %w", where, n, b, dataplane.ErrFull)
	}
	st := &preloadState{where: where}
	p.preload = st
	p.mu.Unlock()

	ch := &captureChannel{}
	p.sw.ApplyFlowMod(ch, &add)

	p.mu.Lock()
	p.preload = nil
	p.mu.Unlock()
	if err := ch.err(); err != nil {
		return 0, fmt.Errorf("pipeline: preload: %w", err)
	}
	if !st.added {
		return 0, errors.New("pipeline: preload: the flow table added no new entry (an identical match and priority exists?)")
	}
	if st.err != nil {
		return st.id, fmt.Errorf("pipeline: preload: %w", st.err)
	}
	return st.id, nil
}

// captureChannel receives the switch's answer to a preload FLOW_MOD.
type captureChannel struct {
	mu     sync.Mutex
	errMsg *openflow.ErrorMsg
}

func (c *captureChannel) Send(m openflow.Message) error {
	if e, ok := m.(*openflow.ErrorMsg); ok {
		c.mu.Lock()
		c.errMsg = e
		c.mu.Unlock()
	}
	return nil
}

func (c *captureChannel) Role() softswitch.Role { return softswitch.RoleService }

func (c *captureChannel) err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.errMsg == nil {
		return nil
	}
	return fmt.Errorf("flow table refused: %s", c.errMsg.Error())
}
