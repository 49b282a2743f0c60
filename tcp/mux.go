package tcp

// Mux is one host's TCP demultiplexer: it hands each arriving segment to
// the connection of its port pair, and a SYN for a listening port to a
// new connection made by that port's Accept. It is what a simulated host
// (or a live shim) puts between its link and its endpoints; the host
// itself only decides which Mux a segment's address belongs to.
type Mux struct {
	conns  map[[2]uint16]*Conn
	listen map[uint16]func(remotePort uint16) (*Conn, error)
	// Unmatched counts segments for no connection and no listener (a
	// real stack would answer with RST; this one drops them).
	Unmatched uint64
}

// NewMux returns an empty demultiplexer.
func NewMux() *Mux {
	return &Mux{conns: map[[2]uint16]*Conn{}, listen: map[uint16]func(uint16) (*Conn, error){}}
}

// Add registers a connection (active or passive) under its configured
// ports.
func (m *Mux) Add(c *Conn) { m.conns[[2]uint16{c.cfg.LocalPort, c.cfg.RemotePort}] = c }

// Remove forgets a connection.
func (m *Mux) Remove(c *Conn) { delete(m.conns, [2]uint16{c.cfg.LocalPort, c.cfg.RemotePort}) }

// Listen makes SYNs to port create connections: accept returns a new
// Conn (with LocalPort = port, RemotePort = remotePort) that Mux puts in
// state Listen, registers and hands the SYN.
func (m *Mux) Listen(port uint16, accept func(remotePort uint16) (*Conn, error)) {
	m.listen[port] = accept
}

// Input delivers one segment.
func (m *Mux) Input(s *Segment) {
	if c, ok := m.conns[[2]uint16{s.DstPort, s.SrcPort}]; ok {
		c.Input(s)
		return
	}
	accept, ok := m.listen[s.DstPort]
	if !ok || s.Flags&(FlagSYN|FlagACK) != FlagSYN {
		m.Unmatched++
		return
	}
	c, err := accept(s.SrcPort)
	if err != nil || c == nil || c.Listen() != nil {
		m.Unmatched++
		return
	}
	m.Add(c)
	c.Input(s)
}

// Len is the number of registered connections.
func (m *Mux) Len() int { return len(m.conns) }
