package calibrate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/pseudocong/pseudocong/openflow"
)

// This file is the only one that uses package openflow's connection API
// (openflow.Dial/Listen/NewConn/Conn): if that API changes, this file
// changes. The rest of the package sees ofClient.

// ofClient is calibrate's controller session with the switch.
type ofClient struct {
	c    *openflow.Conn
	peer string
	log  *slog.Logger

	// onPacketIn receives every PACKET_IN with its arrival time; the data
	// is a copy. Set before start; called on the reader goroutine.
	onPacketIn func(at time.Time, inPort uint16, data []byte)

	mu     sync.Mutex
	errs   map[uint32]*openflow.ErrorMsg // unsolicited ERRORs by xid
	anyErr []*openflow.ErrorMsg
}

// connectSwitch dials target (tcp:HOST:PORT, ...) or, when listen is set,
// waits on it for the switch to connect, then does the OpenFlow handshake.
func connectSwitch(ctx context.Context, target, listen string, log *slog.Logger) (*ofClient, error) {
	var nc net.Conn
	var err error
	switch {
	case target != "":
		nc, err = openflow.Dial(ctx, target, nil)
		if err != nil {
			return nil, fmt.Errorf("connect to switch %s: %w", target, err)
		}
	case listen != "":
		ln, lerr := openflow.Listen(listen, nil)
		if lerr != nil {
			return nil, fmt.Errorf("listen on %s: %w", listen, lerr)
		}
		defer ln.Close()
		log.Info("waiting for the switch to connect", "listen", ln.Addr().String())
		stop := context.AfterFunc(ctx, func() { ln.Close() })
		nc, err = ln.Accept()
		stop()
		if err != nil {
			if ctx.Err() != nil {
				err = ctx.Err()
			}
			return nil, fmt.Errorf("no switch connected to %s: %w", listen, err)
		}
	default:
		return nil, errors.New("give --switch or --listen")
	}
	c := openflow.NewConn(nc, openflow.ConnConfig{WriteQueue: 16384, ReadQueue: 4096, Logger: log})
	if err := c.Handshake(ctx); err != nil {
		return nil, fmt.Errorf("OpenFlow handshake with %s: %w", nc.RemoteAddr(), err)
	}
	return &ofClient{c: c, peer: nc.RemoteAddr().String(), log: log, errs: map[uint32]*openflow.ErrorMsg{}}, nil
}

// start runs the reader: PACKET_INs to onPacketIn, ERRORs recorded.
func (o *ofClient) start() {
	go func() {
		for {
			m, err := o.c.ReadMessage()
			if err != nil {
				return
			}
			switch v := m.(type) {
			case *openflow.PacketIn:
				if o.onPacketIn != nil {
					o.onPacketIn(time.Now(), v.InPort, append([]byte(nil), v.Data...))
				}
			case *openflow.ErrorMsg:
				o.mu.Lock()
				o.errs[v.Xid] = v
				o.anyErr = append(o.anyErr, v)
				o.mu.Unlock()
			}
		}
	}()
}

// done is closed when the connection ends; err says why.
func (o *ofClient) done() <-chan struct{} { return o.c.Done() }
func (o *ofClient) err() error            { return o.c.Err() }
func (o *ofClient) close()                { o.c.Close() }

// errorFor returns the ERROR the switch sent for xid, if any.
func (o *ofClient) errorFor(xid uint32) *openflow.ErrorMsg {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.errs[xid]
}

func (o *ofClient) features(ctx context.Context) (*openflow.FeaturesReply, error) {
	r, err := o.c.Request(ctx, &openflow.FeaturesRequest{})
	if err != nil {
		return nil, fmt.Errorf("FEATURES_REQUEST: %w", err)
	}
	f, ok := r.(*openflow.FeaturesReply)
	if !ok {
		return nil, fmt.Errorf("FEATURES_REQUEST answered with %v", r.MsgType())
	}
	return f, nil
}

// desc returns the switch's DESC stats as one line ("" if refused).
func (o *ofClient) desc(ctx context.Context) string {
	r, err := o.c.RequestMulti(ctx, &openflow.StatsRequest{Body: openflow.DescStatsRequest{}})
	if err != nil || len(r) == 0 {
		return ""
	}
	if sr, ok := r[0].(*openflow.StatsReply); ok {
		if d, ok := sr.Body.(openflow.DescStats); ok {
			return strings.Join([]string{d.MfrDesc, d.HwDesc, d.SwDesc}, " / ")
		}
		if d, ok := sr.Body.(*openflow.DescStats); ok {
			return strings.Join([]string{d.MfrDesc, d.HwDesc, d.SwDesc}, " / ")
		}
	}
	return ""
}

// flows returns every flow in every table.
func (o *ofClient) flows(ctx context.Context) ([]openflow.FlowStats, error) {
	r, err := o.c.RequestMulti(ctx, &openflow.StatsRequest{Body: openflow.FlowStatsRequest{
		Match: openflow.MatchAll(), TableID: openflow.TableAll, OutPort: openflow.PortNone}})
	if err != nil {
		return nil, fmt.Errorf("flow stats: %w", err)
	}
	var out []openflow.FlowStats
	for _, m := range r {
		sr, ok := m.(*openflow.StatsReply)
		if !ok {
			return nil, fmt.Errorf("flow stats answered with %v", m.MsgType())
		}
		switch b := sr.Body.(type) {
		case openflow.FlowStatsReply:
			out = append(out, b...)
		case *openflow.FlowStatsReply:
			out = append(out, (*b)...)
		default:
			return nil, fmt.Errorf("flow stats answered with a %T body", sr.Body)
		}
	}
	return out, nil
}

// tableMax returns the largest max_entries of the switch's tables (0 if
// the switch does not say).
func (o *ofClient) tableMax(ctx context.Context) int {
	r, err := o.c.RequestMulti(ctx, &openflow.StatsRequest{Body: openflow.TableStatsRequest{}})
	if err != nil {
		return 0
	}
	best := 0
	for _, m := range r {
		sr, ok := m.(*openflow.StatsReply)
		if !ok {
			continue
		}
		var ts []openflow.TableStats
		switch b := sr.Body.(type) {
		case openflow.TableStatsReply:
			ts = b
		case *openflow.TableStatsReply:
			ts = *b
		}
		for _, t := range ts {
			best = max(best, int(t.MaxEntries))
		}
	}
	return best
}

// send queues one message and returns its xid.
func (o *ofClient) send(ctx context.Context, m openflow.Message) (uint32, error) {
	xid := o.c.NextXid()
	m.SetXid(xid)
	if err := o.c.SendContext(ctx, m); err != nil {
		return 0, err
	}
	return xid, nil
}

func (o *ofClient) barrier(ctx context.Context) error { return o.c.Barrier(ctx) }
func (o *ofClient) echo(ctx context.Context) (time.Duration, error) {
	return o.c.Echo(ctx)
}
