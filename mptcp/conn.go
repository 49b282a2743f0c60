package mptcp

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/tcp"
	"github.com/pseudocong/pseudocong/tcp/cc"
)

// Config configures one side of an MPTCP connection.
type Config struct {
	Clock clock.Clock
	// Subflow is the template of every subflow's tcp.Config (MSS,
	// profile, SACK, ...); Clock, Output, ports, ISS and Algorithm are
	// set per subflow. Its buffers should be large: the connection-level
	// buffer (RcvBuf) is the one that limits.
	Subflow tcp.Config
	// Output sends a segment on path; valid only during the call.
	Output func(path int, s *tcp.Segment)
	// RcvBuf is the connection-level receive buffer, bytes.
	RcvBuf int
	// Uncoupled gives each subflow its own Subflow.CC instance; the
	// default is LIA coupled across the subflows (RFC 6356).
	Uncoupled bool
	Policy    Policy    // nil: RTX-SAME
	Scheduler Scheduler // nil: LowestRTT
	Key       uint64    // this side's MPTCP key (deterministic)
	Seed      uint64
}

// Token is the connection token derived from a key (RFC 8684 uses the
// high 32 bits of SHA-256(key); a 64-bit mix does here: nothing is
// adversarial in the simulator).
func Token(key uint64) uint32 {
	z := key + 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return uint32((z ^ (z >> 31)) >> 32)
}

// mapping is one DSS mapping in subflow offsets (relative to ISS+1).
type mapping struct {
	sub  uint32
	data uint64
	n    uint32
}

type span struct{ l, r uint64 }

type reinject struct {
	data         uint64
	n            uint64
	from, target int
}

type subflow struct {
	id, path int
	c        *tcp.Conn
	cfg      tcp.Config
	joined   bool // MP_CAPABLE or MP_JOIN completed
	dead     bool
	sentCap  bool // client: MP_CAPABLE third ACK sent
	// Sender: mappings of the bytes written, in subflow order; written
	// is the subflow offset of the next byte.
	maps    []mapping
	mapHead int
	written uint32
	// Receiver: mappings learned from DSS options, sorted; rcvd is the
	// subflow offset of the next in-order byte.
	rmaps []mapping
	rcvd  uint32
	// Counters.
	reinjectedBytes uint64
	timeouts        uint64
}

// Conn is one side of an MPTCP connection: the client sends (a bulk
// source), the server receives.
type Conn struct {
	cfg     Config
	client  bool
	subs    []*subflow
	group   *cc.LIAGroup
	policy  Policy
	sched   Scheduler
	rng     *rand.Rand
	peerKey uint64
	mpOK    bool
	paths   int
	view    []Subflow

	// Sender data level.
	dataNxt, dataUna, rightEdge uint64
	bulk                        bool
	reinj                       []reinject
	inSched                     bool
	blocked                     bool
	blockedSince                time.Time
	blockedTotal                time.Duration
	measureFrom                 time.Time

	// Receiver data level.
	rcvNxt   uint64
	ooo      []span
	oooBytes uint64
	edge     uint64 // right edge last advertised
	received uint64 // in-order data-level bytes delivered
	dupBytes uint64 // data-level bytes that arrived twice
}

func newConn(cfg Config, client bool) (*Conn, error) {
	if cfg.Clock == nil || cfg.Output == nil {
		return nil, fmt.Errorf("mptcp: config: clock and output are required")
	}
	if cfg.RcvBuf < cfg.Subflow.MSS {
		return nil, fmt.Errorf("mptcp: config: receive buffer %d bytes: want at least one MSS (%d)", cfg.RcvBuf, cfg.Subflow.MSS)
	}
	if cfg.Policy == nil {
		cfg.Policy = Same{}
	}
	if cfg.Scheduler == nil {
		cfg.Scheduler = LowestRTT{}
	}
	c := &Conn{cfg: cfg, client: client, policy: cfg.Policy, sched: cfg.Scheduler,
		rng: rand.New(rand.NewPCG(cfg.Seed, 0x6d70746370))} // "mptcp"
	if !cfg.Uncoupled {
		c.group = cc.NewLIAGroup()
	}
	return c, nil
}

// NewClient is the sending side; Connect opens its subflows, one per path.
func NewClient(cfg Config, paths int) (*Conn, error) {
	if paths < 1 {
		return nil, fmt.Errorf("mptcp: %d paths: want at least 1", paths)
	}
	c, err := newConn(cfg, true)
	if err != nil {
		return nil, err
	}
	c.paths = paths
	return c, nil
}

// NewServer is the receiving side: it accepts the MP_CAPABLE SYN and the
// MP_JOIN SYNs that carry its token, on any path.
func NewServer(cfg Config) (*Conn, error) { return newConn(cfg, false) }

// Bulk makes the client send for ever (an iperf-like source).
func (c *Conn) Bulk() { c.bulk = true; c.schedule() }

// Connect opens the first subflow (MP_CAPABLE) on path 0; the others
// join once it is established.
func (c *Conn) Connect() error {
	if !c.client {
		return fmt.Errorf("mptcp: connect on a server")
	}
	sf, err := c.addSubflow(0, 10000, 5001)
	if err != nil {
		return err
	}
	return sf.c.Connect()
}

func (c *Conn) addSubflow(path int, local, remote uint16) (*subflow, error) {
	sf := &subflow{id: len(c.subs), path: path}
	tc := c.cfg.Subflow
	tc.Clock = c.cfg.Clock
	tc.LocalPort, tc.RemotePort = local, remote
	tc.ISS = uint32(c.cfg.Seed*2654435761) ^ uint32(sf.id)*0x9e3779b9 ^ uint32(c.cfg.Key)
	tc.Seed = c.cfg.Seed*131 + uint64(sf.id)
	if c.group != nil {
		tc.Algorithm = c.group.New()
	}
	tc.Output = func(s *tcp.Segment) { c.output(sf, s) }
	conn, err := tcp.New(tc)
	if err != nil {
		return nil, fmt.Errorf("mptcp: subflow %d: %w", sf.id, err)
	}
	sf.c, sf.cfg = conn, tc
	conn.Handle(tcp.Handlers{
		Established: func() { c.established(sf) },
		Received:    func(n int) { c.subflowData(sf, n) },
		Timeout:     func() { c.timeout(sf) },
		Failed:      func(error) { c.failed(sf) },
	})
	c.subs = append(c.subs, sf)
	return sf, nil
}

// output adds the MPTCP options to a subflow's segment and sends it.
func (c *Conn) output(sf *subflow, s *tcp.Segment) {
	o := &s.MP
	syn := s.Flags&tcp.FlagSYN != 0
	switch {
	case c.client && syn && sf.id == 0:
		*o = tcp.MPOption{Kind: tcp.MPCapable, Key: c.cfg.Key}
	case c.client && syn:
		*o = tcp.MPOption{Kind: tcp.MPJoin, Token: Token(c.peerKey), AddrID: uint8(sf.path)}
	case !c.client && syn && sf.id == 0:
		*o = tcp.MPOption{Kind: tcp.MPCapable, Key: c.cfg.Key}
	case !c.client && syn:
		*o = tcp.MPOption{Kind: tcp.MPJoin, AddrID: uint8(sf.path)}
	case c.client && sf.id == 0 && !sf.sentCap:
		sf.sentCap = true
		*o = tcp.MPOption{Kind: tcp.MPCapable, Key: c.cfg.Key, PeerKey: c.peerKey}
	}
	if !c.client {
		o.Kind |= tcp.MPDSS
		o.HasDataAck = true
		o.DataAck = c.rcvNxt
		c.edge = max(c.edge, c.rcvNxt+uint64(max(int64(c.cfg.RcvBuf)-int64(c.oooBytes), 0)))
		o.DataWnd = uint32(c.edge - c.rcvNxt)
	}
	if c.client && s.Len > 0 {
		c.fillMaps(sf, s)
	}
	c.cfg.Output(sf.path, s)
}

// fillMaps puts the DSS mappings covering the segment into it.
func (c *Conn) fillMaps(sf *subflow, s *tcp.Segment) {
	o := &s.MP
	o.Kind |= tcp.MPDSS
	off := s.Seq - (sf.c.ISS() + 1)
	end := off + uint32(s.Len)
	i := sort.Search(len(sf.maps)-sf.mapHead, func(k int) bool {
		m := sf.maps[sf.mapHead+k]
		return m.sub+m.n > off
	}) + sf.mapHead
	for ; i < len(sf.maps) && o.NumMap < len(o.Map); i++ {
		m := sf.maps[i]
		if m.sub >= end {
			break
		}
		o.Map[o.NumMap] = tcp.DSSMap{DataSeq: m.data, SubSeq: m.sub, Len: uint16(m.n)}
		o.NumMap++
	}
}

// Input hands the connection a segment that arrived on path.
func (c *Conn) Input(path int, s *tcp.Segment) {
	sf := c.find(path, s)
	if sf == nil {
		return
	}
	o := &s.MP
	if c.client {
		if s.Flags&tcp.FlagSYN != 0 {
			switch {
			case sf.id == 0 && o.Kind&tcp.MPCapable != 0:
				c.peerKey, c.mpOK, sf.joined = o.Key, true, true
			case sf.id > 0 && o.Kind&tcp.MPJoin != 0:
				sf.joined = true
			}
		}
		if o.HasDataAck {
			if o.DataAck > c.dataUna {
				c.dataUna = o.DataAck
			}
			c.rightEdge = max(c.rightEdge, o.DataAck+uint64(o.DataWnd))
		}
	} else if o.Kind&tcp.MPDSS != 0 {
		for k := 0; k < o.NumMap; k++ {
			m := o.Map[k]
			sf.learn(mapping{sub: m.SubSeq, data: m.DataSeq, n: uint32(m.Len)})
		}
	}
	sf.c.Input(s)
	if c.client {
		c.schedule()
	}
}

// find returns the subflow a segment belongs to, making one for an
// acceptable SYN on the server.
func (c *Conn) find(path int, s *tcp.Segment) *subflow {
	for _, sf := range c.subs {
		if sf.path == path && sf.cfg.LocalPort == s.DstPort && sf.cfg.RemotePort == s.SrcPort {
			return sf
		}
	}
	if c.client || s.Flags&(tcp.FlagSYN|tcp.FlagACK) != tcp.FlagSYN {
		return nil
	}
	o := &s.MP
	switch {
	case o.Kind&tcp.MPCapable != 0 && len(c.subs) == 0:
		c.peerKey = o.Key
	case o.Kind&tcp.MPJoin != 0 && c.mpOK && o.Token == Token(c.cfg.Key):
	default:
		return nil // no MPTCP, a second MP_CAPABLE, or a wrong token
	}
	sf, err := c.addSubflow(path, s.DstPort, s.SrcPort)
	if err != nil || sf.c.Listen() != nil {
		return nil
	}
	if sf.id == 0 {
		c.mpOK = true
	}
	sf.joined = true
	return sf
}

func (c *Conn) established(sf *subflow) {
	if !c.client || sf.id != 0 || !c.mpOK {
		return
	}
	for p := 1; p < c.paths; p++ {
		j, err := c.addSubflow(p, uint16(10000+p), 5001)
		if err == nil {
			_ = j.c.Connect()
		}
	}
}

// learn records a receiver-side mapping (duplicates from retransmitted
// segments are dropped).
func (sf *subflow) learn(m mapping) {
	if m.n == 0 || m.sub+m.n <= sf.rcvd {
		return
	}
	i := sort.Search(len(sf.rmaps), func(k int) bool { return sf.rmaps[k].sub >= m.sub })
	if i < len(sf.rmaps) && sf.rmaps[i].sub == m.sub {
		return
	}
	sf.rmaps = append(sf.rmaps, mapping{})
	copy(sf.rmaps[i+1:], sf.rmaps[i:])
	sf.rmaps[i] = m
}

// subflowData turns n new in-order subflow bytes into data-level ranges.
func (c *Conn) subflowData(sf *subflow, n int) {
	if c.client {
		return
	}
	lo, hi := sf.rcvd, sf.rcvd+uint32(n)
	sf.rcvd = hi
	k := 0
	for ; k < len(sf.rmaps); k++ {
		m := sf.rmaps[k]
		if m.sub >= hi {
			break
		}
		a, b := max(m.sub, lo), min(m.sub+m.n, hi)
		if a < b {
			c.deliver(m.data+uint64(a-m.sub), uint64(b-a))
		}
		if m.sub+m.n > hi {
			break
		}
	}
	sf.rmaps = sf.rmaps[:copy(sf.rmaps, sf.rmaps[k:])]
}

// deliver puts data-level bytes [d, d+n) into the connection-level
// receive buffer; the application takes the in-order ones at once.
func (c *Conn) deliver(d, n uint64) {
	l, r := d, d+n
	if r <= c.rcvNxt {
		c.dupBytes += n
		return
	}
	l = max(l, c.rcvNxt)
	if l == c.rcvNxt {
		adv := r - c.rcvNxt
		c.rcvNxt = r
		for len(c.ooo) > 0 && c.ooo[0].l <= c.rcvNxt {
			b := c.ooo[0]
			if b.r > c.rcvNxt {
				adv += b.r - c.rcvNxt
				c.rcvNxt = b.r
			}
			c.oooBytes -= b.r - b.l
			c.ooo = c.ooo[1:]
		}
		c.received += adv
		return
	}
	// Out of order at the data level: merge into the sorted spans.
	i := sort.Search(len(c.ooo), func(k int) bool { return c.ooo[k].r >= l })
	j := i
	for j < len(c.ooo) && c.ooo[j].l <= r {
		l, r = min(l, c.ooo[j].l), max(r, c.ooo[j].r)
		c.oooBytes -= c.ooo[j].r - c.ooo[j].l
		j++
	}
	c.ooo = append(c.ooo[:i], append([]span{{l, r}}, c.ooo[j:]...)...)
	c.oooBytes += r - l
}

// views refreshes the policy/scheduler view of the subflows.
func (c *Conn) views() []Subflow {
	c.view = c.view[:0]
	for _, sf := range c.subs {
		in := sf.c.Info()
		loss := 0.0
		if sent := sf.c.SentSegments(); sent > 0 {
			loss = float64(sf.c.LostSegments()) / float64(sent)
		}
		space := 0
		usable := sf.joined && !sf.dead && in.State == tcp.Established
		if usable {
			space = sf.c.SendSpace()
		}
		c.view = append(c.view, Subflow{ID: sf.id, Cwnd: in.Cwnd, Ssthresh: in.Ssthresh, Space: space,
			SRTT: in.SRTT, RTO: in.RTO, LossRate: loss, Usable: usable})
	}
	return c.view
}

// timeout is a subflow's RTO: the policy picks where the data-level
// retransmission of its outstanding data goes.
func (c *Conn) timeout(sf *subflow) {
	if !c.client {
		return
	}
	sf.timeouts++
	subs := c.views()
	t := c.policy.Pick(sf.id, subs, c.rng)
	if t < 0 || t >= len(c.subs) || t == sf.id || !subs[t].Usable {
		return
	}
	c.reinjectFrom(sf, t)
	c.schedule()
}

// failed is a subflow that gave up (too many timeouts): what it held
// beyond the DATA_ACK goes to the usable subflow with the lowest RTT, as
// Linux reinjects a closed subflow's data.
func (c *Conn) failed(sf *subflow) {
	sf.dead = true
	if !c.client {
		return
	}
	subs := c.views()
	t := -1
	for i := range subs {
		if subs[i].Usable && (t < 0 || subs[i].SRTT < subs[t].SRTT) {
			t = i
		}
	}
	if t < 0 {
		return
	}
	for i := range c.reinj {
		if c.reinj[i].target == sf.id {
			c.reinj[i].target = t
		}
	}
	c.reinjectFrom(sf, t)
	c.schedule()
}

// reinjectFrom queues everything sf holds beyond the DATA_ACK for a
// data-level retransmission on subflow t, replacing the reinjections
// queued from sf before (stale now).
func (c *Conn) reinjectFrom(sf *subflow, t int) {
	keep := c.reinj[:0]
	for _, r := range c.reinj {
		if r.from != sf.id {
			keep = append(keep, r)
		}
	}
	c.reinj = keep
	acked := uint32(sf.c.Stats().BytesAcked)
	for _, m := range sf.maps[sf.mapHead:] {
		if m.sub+m.n <= acked {
			continue
		}
		d, n := m.data, uint64(m.n)
		if m.sub < acked {
			d, n = d+uint64(acked-m.sub), n-uint64(acked-m.sub)
		}
		if d+n <= c.dataUna {
			continue
		}
		if d < c.dataUna {
			n -= c.dataUna - d
			d = c.dataUna
		}
		c.reinj = append(c.reinj, reinject{data: d, n: n, from: sf.id, target: t})
	}
}

// write hands one segment's worth of data-level bytes to a subflow.
func (c *Conn) write(sf *subflow, d, n uint64) {
	// Trim mappings the subflow has had acknowledged.
	acked := uint32(sf.c.Stats().BytesAcked)
	for sf.mapHead < len(sf.maps) && sf.maps[sf.mapHead].sub+sf.maps[sf.mapHead].n <= acked {
		sf.mapHead++
	}
	if sf.mapHead > 1024 && sf.mapHead*2 > len(sf.maps) {
		sf.maps = sf.maps[:copy(sf.maps, sf.maps[sf.mapHead:])]
		sf.mapHead = 0
	}
	sf.maps = append(sf.maps, mapping{sub: sf.written, data: d, n: uint32(n)})
	sf.written += uint32(n)
	if got := sf.c.Write(int(n)); got != int(n) {
		panic(fmt.Sprintf("mptcp: subflow %d took %d of %d bytes: its send buffer must exceed its window", sf.id, got, n))
	}
}

// schedule sends what the windows admit: reinjections first, then new
// data by the scheduler, never beyond DATA_ACK + window.
func (c *Conn) schedule() {
	if !c.client || c.inSched || !c.mpOK {
		return
	}
	c.inSched = true
	defer func() { c.inSched = false }()
	for {
		subs := c.views()
		if len(c.reinj) > 0 {
			r := &c.reinj[0]
			if r.data+r.n <= c.dataUna {
				c.reinj = c.reinj[1:]
				continue
			}
			if r.data < c.dataUna {
				r.n -= c.dataUna - r.data
				r.data = c.dataUna
			}
			if subs[r.target].Usable && subs[r.target].Space > 0 {
				sf := c.subs[r.target]
				n := min(r.n, uint64(sf.c.MSS()))
				c.write(sf, r.data, n)
				sf.reinjectedBytes += n
				r.data += n
				r.n -= n
				if r.n == 0 {
					c.reinj = c.reinj[1:]
				}
				continue
			}
		}
		if !c.bulk || c.dataNxt >= c.rightEdge {
			break
		}
		i := c.sched.Pick(subs)
		if i < 0 {
			break
		}
		sf := c.subs[i]
		n := min(uint64(sf.c.MSS()), c.rightEdge-c.dataNxt)
		c.write(sf, c.dataNxt, n)
		c.dataNxt += n
	}
	// Blocked: data to send, window space on some subflow, but the
	// connection-level receive window is full.
	blocked := false
	if c.bulk && c.dataNxt >= c.rightEdge {
		for _, s := range c.view {
			if s.Usable && s.Space > 0 {
				blocked = true
				break
			}
		}
	}
	c.setBlocked(blocked)
}

func (c *Conn) setBlocked(b bool) {
	now := c.cfg.Clock.Now()
	if c.blocked && !b {
		c.blockedTotal += now.Sub(maxTime(c.blockedSince, c.measureFrom))
	}
	if !c.blocked && b {
		c.blockedSince = now
	}
	c.blocked = b
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// BlockedTime is how long the sender has been blocked by the receive
// window since the measurement start (MeasureFrom).
func (c *Conn) BlockedTime() time.Duration {
	t := c.blockedTotal
	if c.blocked {
		t += c.cfg.Clock.Now().Sub(maxTime(c.blockedSince, c.measureFrom))
	}
	return t
}

// MeasureFrom restarts the blocked-time count at now.
func (c *Conn) MeasureFrom() {
	c.measureFrom = c.cfg.Clock.Now()
	c.blockedTotal = 0
}

// Received is the data-level bytes the server delivered in order.
func (c *Conn) Received() uint64 { return c.received }

// DupBytes is the data-level bytes the server received more than once.
func (c *Conn) DupBytes() uint64 { return c.dupBytes }

// Capable reports that MP_CAPABLE was negotiated.
func (c *Conn) Capable() bool { return c.mpOK }

// SubflowStats is one subflow's outcome.
type SubflowStats struct {
	Path            int       `json:"path"`
	Joined          bool      `json:"joined"`
	Timeouts        uint64    `json:"timeouts"`
	ReinjectedBytes uint64    `json:"reinjected_bytes"`
	TCP             tcp.Stats `json:"-"`
}

// Subflows reports every subflow.
func (c *Conn) Subflows() []SubflowStats {
	out := make([]SubflowStats, 0, len(c.subs))
	for _, sf := range c.subs {
		out = append(out, SubflowStats{Path: sf.path, Joined: sf.joined, Timeouts: sf.timeouts,
			ReinjectedBytes: sf.reinjectedBytes, TCP: sf.c.Stats()})
	}
	return out
}
