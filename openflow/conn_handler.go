package openflow

// Handler handles the messages of one connection, in the net/http style.
type Handler interface {
	// HandleMessage is called for each received message in arrival order,
	// one at a time, on the goroutine that called Serve. It may Send freely;
	// see Conn.Request about waiting for replies from here.
	HandleMessage(c *Conn, m Message)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(c *Conn, m Message)

// HandleMessage calls f(c, m).
func (f HandlerFunc) HandleMessage(c *Conn, m Message) { f(c, m) }

// Serve calls h for every message ReadMessage would return, in order, until
// the connection ends, and returns Err(). Messages the connection handles
// itself (ECHO, HELLO, replies to Request) never reach h.
func (c *Conn) Serve(h Handler) error {
	for {
		m, err := c.ReadMessage()
		if err != nil {
			return err
		}
		h.HandleMessage(c, m)
	}
}

// ServeMux dispatches by message type with a fixed table, so dispatch is
// deterministic and costs one array index. Register handlers before
// serving; ServeMux is not safe for registration during dispatch.
type ServeMux struct {
	byType [256]Handler
	// Default handles types without a handler; nil drops them.
	Default Handler
}

// NewServeMux returns an empty mux.
func NewServeMux() *ServeMux { return &ServeMux{} }

// Handle registers h for messages of type t, replacing any earlier one.
func (mux *ServeMux) Handle(t Type, h Handler) { mux.byType[t] = h }

// HandleFunc registers f for messages of type t.
func (mux *ServeMux) HandleFunc(t Type, f func(c *Conn, m Message)) {
	mux.byType[t] = HandlerFunc(f)
}

// HandleMessage dispatches m to the handler of its type.
func (mux *ServeMux) HandleMessage(c *Conn, m Message) {
	if h := mux.byType[m.MsgType()]; h != nil {
		h.HandleMessage(c, m)
	} else if mux.Default != nil {
		mux.Default.HandleMessage(c, m)
	}
}
