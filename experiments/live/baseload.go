package live

import (
	"context"
	"fmt"
	"time"

	"github.com/pseudocong/pseudocong/controller"
	"github.com/pseudocong/pseudocong/openflow"
)

// basePriority is the priority of the base-load rules for a reactive
// priority pattern, the same numbers as the sim backend's preload: what
// earlier flows of the pattern would have left in the table — below every
// new rule (ascending: each new rule outranks and shifts all of them),
// equal (constant), or above (descending: new rules go after them).
func basePriority(pattern string) (uint16, error) {
	p, err := controller.ParsePriorityStrategy(pattern)
	if err != nil {
		return 0, err
	}
	switch p {
	case controller.PriorityAscending:
		return 0, nil
	case controller.PriorityDescending:
		return 0xffff, nil
	}
	return controller.DefaultConstantPriority, nil
}

// baseRule is base rule i: exact-match TCP 10.1.x.y:40000 -> 10.2.0.1:80
// entering on port 1 (the sim's base traffic), which no probe matches.
func baseRule(i int, prio uint16) *openflow.FlowMod {
	src := uint32(10)<<24 | uint32(1)<<16 | uint32(i>>8&0xff)<<8 | uint32(i&0xff)
	dst := uint32(10)<<24 | uint32(2)<<16 | 1
	return &openflow.FlowMod{
		Header: openflow.Header{Version: openflow.Version, Type: openflow.TypeFlowMod},
		Match: openflow.Match{
			Wildcards: openflow.WildcardDlVlan | openflow.WildcardDlVlanPcp | openflow.WildcardNwTos,
			InPort:    1,
			DlSrc:     [6]byte{0x02, 0x00, 10, 1, byte(i >> 8), byte(i)},
			DlDst:     [6]byte{0x02, 0x00, 10, 2, 0, 1},
			DlType:    0x0800,
			NwProto:   6,
			NwSrc:     src, NwDst: dst,
			TpSrc: 40000, TpDst: 80,
		},
		Command: openflow.FlowModAdd, Priority: prio,
		BufferID: openflow.NoBuffer, OutPort: openflow.PortNone,
		Actions: []openflow.Action{openflow.ActionOutput{Port: 2}},
	}
}

// coverRules are the wildcard cover rules of a cover_rules run: one per
// ingress port of the two-host testbed, forwarding everything to the
// other port (ARP included), at the lowest priority above the ascending
// base load. The reactive controller then never hears of a flow.
func coverRules() []*openflow.FlowMod {
	var out []*openflow.FlowMod
	for _, p := range [][2]uint16{{1, 2}, {2, 1}} {
		out = append(out, &openflow.FlowMod{
			Header:  openflow.Header{Version: openflow.Version, Type: openflow.TypeFlowMod},
			Match:   openflow.Match{Wildcards: openflow.WildcardAll &^ openflow.WildcardInPort, InPort: p[0]},
			Command: openflow.FlowModAdd, Priority: 1,
			BufferID: openflow.NoBuffer, OutPort: openflow.PortNone,
			Actions: []openflow.Action{openflow.ActionOutput{Port: p[1]}},
		})
	}
	return out
}

// installBaseLoad pushes n base rules (then, with cover, the cover rules)
// into the switch through its passive listener at mgmtAddr and waits for
// the BARRIER: the modelled data plane answers it only once every rule is
// in the TCAM, so the probes start on the table the spec asks for.
func installBaseLoad(ctx context.Context, mgmtAddr string, n int, pattern string, cover bool) error {
	if n == 0 && !cover {
		return nil
	}
	prio, err := basePriority(pattern)
	if err != nil {
		return err
	}
	nc, err := openflow.Dial(ctx, "tcp:"+mgmtAddr, nil)
	if err != nil {
		return fmt.Errorf("base load: dial switch %s: %w", mgmtAddr, err)
	}
	c := openflow.NewConn(nc, openflow.ConnConfig{WriteQueue: 8192})
	defer c.Close()
	if err := c.Handshake(ctx); err != nil {
		return fmt.Errorf("base load: handshake with %s: %w", mgmtAddr, err)
	}
	// Anything unsolicited (an ERROR for a refused rule) is collected; the
	// switch sends it before the BARRIER reply.
	refused := make(chan error, 1)
	go func() {
		var first error
		for {
			m, err := c.ReadMessage()
			if err != nil {
				refused <- first
				return
			}
			if e, ok := m.(*openflow.ErrorMsg); ok && first == nil {
				first = fmt.Errorf("base load: switch refused a rule: %v", e)
			}
		}
	}()
	for i := range n {
		if err := c.SendContext(ctx, baseRule(i, prio)); err != nil {
			return fmt.Errorf("base load: rule %d: %w", i, err)
		}
	}
	if cover {
		for i, fm := range coverRules() {
			if err := c.SendContext(ctx, fm); err != nil {
				return fmt.Errorf("cover rule %d: %w", i+1, err)
			}
		}
	}
	// Generous: a pica8 write costs 0.3 ms of local CPU, a move 16 µs.
	bctx, cancel := context.WithTimeout(ctx, 30*time.Second+time.Duration(n)*10*time.Millisecond)
	defer cancel()
	if err := c.Barrier(bctx); err != nil {
		return fmt.Errorf("base load: barrier after %d rules: %w", n, err)
	}
	c.Close()
	return <-refused
}
