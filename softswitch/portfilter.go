package softswitch

import "fmt"

// PortFilter is seam (d): a translation of the frames one port receives
// and transmits, such as virtualized congestion control on a
// tenant-facing port (package softswitch/vcc). The default is none: a port
// without a filter costs one nil check per frame.
//
// FromPort sees every frame received on the port before the flow-table
// lookup; ToPort every frame queued for transmission on it, after the
// actions. Both may rewrite the frame in place but never change its
// length; the frame is the switch's (FromPort) or the port's (ToPort) and
// must not be kept. They are called with the switch lock held, so they
// must not call back into the switch; one filter may serve many ports.
type PortFilter interface {
	FromPort(frame []byte)
	ToPort(frame []byte)
}

// SetPortFilter installs f on port no (nil removes it). The filter goes
// with the port: RemovePort drops it.
func (s *Switch) SetPortFilter(no uint16, f PortFilter) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ps, ok := s.ports[no]
	if !ok {
		return fmt.Errorf("softswitch: no port %d", no)
	}
	ps.filter = f
	return nil
}
