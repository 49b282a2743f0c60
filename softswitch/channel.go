package softswitch

import "github.com/pseudocong/pseudocong/openflow"

// Role says what an OpenFlow connection is to the switch.
type Role uint8

const (
	// RoleController is a controller connection: it gets replies and the
	// asynchronous messages (PACKET_IN, FLOW_REMOVED, PORT_STATUS), and its
	// presence decides the fail mode.
	RoleController Role = iota
	// RoleService is a management connection such as ovs-ofctl on the
	// passive listener: replies only.
	RoleService
)

func (r Role) String() string {
	if r == RoleController {
		return "controller"
	}
	return "service"
}

// Channel is one OpenFlow connection as the core sees it.
type Channel interface {
	// Send queues m for the peer. The core calls it from its outbox drain
	// (never with its lock held), in the order the messages were produced.
	// It must not wait for the peer: everything behind it in the outbox
	// (forwarding, other connections) would wait too. Implementations
	// bound their queue by pushing back on their own peer, or drop and
	// report a full queue as an error, which the core counts and logs.
	Send(m openflow.Message) error
	// Role is fixed for the channel's lifetime.
	Role() Role
}
