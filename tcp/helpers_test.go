package tcp

import (
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// pipe is a test network: two endpoints joined by one-way paths of a
// fixed delay and (if rate > 0) a serialisation rate, with hooks that may
// drop, delay or mark each segment.
type pipe struct {
	t        *testing.T
	sim      *clock.Sim
	a, b     *Conn
	delay    time.Duration
	rate     int64 // bit/s, 0: infinite
	busy     [2]time.Time
	toB, toA []sent // everything each side emitted, in order
	// filter, if set, sees every segment (dir 0: a→b) with its index in
	// that direction and returns extra delay, or drop.
	filter func(dir, i int, s *Segment) (extra time.Duration, drop bool)
	// delivered, if set, runs after each segment's Input at its receiver.
	delivered func(dir int, s *Segment)
}

type sent struct {
	at  time.Duration
	seg Segment
}

func newPipe(t *testing.T, ca, cb Config, delay time.Duration) *pipe {
	t.Helper()
	p := &pipe{t: t, sim: clock.NewSim(epoch), delay: delay}
	ca.Clock, cb.Clock = p.sim, p.sim
	ca.LocalPort, ca.RemotePort, cb.LocalPort, cb.RemotePort = 1000, 80, 80, 1000
	ca.Output = func(s *Segment) { p.carry(0, s) }
	cb.Output = func(s *Segment) { p.carry(1, s) }
	var err error
	if p.a, err = New(ca); err != nil {
		t.Fatal(err)
	}
	if cb.ISS == 0 {
		cb.ISS = 1 << 31
	}
	if p.b, err = New(cb); err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *pipe) carry(dir int, s *Segment) {
	cp := *s
	log := &p.toB
	dst := p.b
	if dir == 1 {
		log, dst = &p.toA, p.a
	}
	i := len(*log)
	*log = append(*log, sent{at: p.sim.Elapsed(), seg: cp})
	var extra time.Duration
	if p.filter != nil {
		var drop bool
		extra, drop = p.filter(dir, i, &cp)
		if drop {
			return
		}
	}
	now := p.sim.Now()
	leave := now
	if p.rate > 0 {
		start := now
		if p.busy[dir].After(start) {
			start = p.busy[dir]
		}
		leave = start.Add(time.Duration(int64(cp.WireLen()) * 8 * int64(time.Second) / p.rate))
		p.busy[dir] = leave
	}
	p.sim.At(leave.Add(p.delay+extra), func() {
		dst.Input(&cp)
		if p.delivered != nil {
			p.delivered(dir, &cp)
		}
	})
}

// start opens the connection (a active, b passive).
func (p *pipe) start() {
	p.t.Helper()
	if err := p.b.Listen(); err != nil {
		p.t.Fatal(err)
	}
	if err := p.a.Connect(); err != nil {
		p.t.Fatal(err)
	}
}

// transfer sends n bytes from a to b and runs until they are all acked
// (or the bound passes); it returns the time the last byte was acked.
func (p *pipe) transfer(n int, bound time.Duration) time.Duration {
	p.t.Helper()
	left := n
	var doneAt time.Duration
	write := func() { left -= p.a.Write(left) }
	p.a.Handle(Handlers{
		Established: write,
		Writable:    write,
		Acked: func(total uint64) {
			if total >= uint64(n) && doneAt == 0 {
				doneAt = p.sim.Elapsed()
			}
		},
	})
	p.start()
	p.sim.RunUntil(epoch.Add(bound))
	if doneAt == 0 {
		p.t.Fatalf("transfer of %d bytes not done after %v: acked %d, a %+v", n, bound, p.a.acked, p.a.Info())
	}
	return doneAt
}

// testConfig is the endpoint configuration of the unit tests.
func testConfig() Config { return DefaultConfig() }
