package loadgen

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"sync/atomic"
	"time"

	"github.com/pseudocong/pseudocong/openflow"
)

const (
	readBufSize = 256 << 10
	// templateCount PACKET_INs are pre-encoded per switch and sent in a
	// ring; writeChunk of them go out per write in throughput mode.
	templateCount = 4096
	writeChunk    = 256
	// latencyTimeout: in latency mode a PACKET_IN without an answer for
	// this long is given up and the next one sent.
	latencyTimeout = time.Second
)

// emuSwitch is one emulated switch.
type emuSwitch struct {
	idx  int
	dpid uint64
	cfg  *Config
	nc   net.Conn

	// ch is the switch's side of the control channel (HELLO, echo
	// answers); its messages go into ctl.
	ch         *openflow.Channel
	chErr      error
	buf        []byte // read buffer; buf[r:w] is unread
	r, w       int
	ctl        []byte // control replies (echo, barrier, ...) of the current batch
	templates  []byte
	responses  atomic.Uint64
	featuresOK bool
	timeouts   atomic.Uint64 // latency mode: PACKET_INs given up
}

func dial(ctx context.Context, cfg *Config, idx int) (*emuSwitch, error) {
	network, addr := "tcp", cfg.Controller
	if t, err := openflow.ParseTarget(cfg.Controller); err == nil {
		if t.Passive || t.Scheme == "ssl" {
			return nil, fmt.Errorf("loadgen: controller %q: want tcp:HOST:PORT, unix:PATH or HOST:PORT", cfg.Controller)
		}
		network, addr = t.Network(), t.Address()
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, fmt.Errorf("loadgen: switch %d: %w", idx+1, err)
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	s := &emuSwitch{
		idx:       idx,
		dpid:      cfg.FirstDPID + uint64(idx),
		cfg:       cfg,
		nc:        nc,
		buf:       make([]byte, readBufSize),
		templates: flowTemplates(idx, cfg.MACs, cfg.Ports, templateCount),
	}
	// No keepalive of our own (cbench has none); the setup deadline bounds
	// the handshake.
	s.ch = openflow.NewChannel(openflow.ChannelConfig{Role: openflow.RoleSwitch, Out: ctlSender{s},
		HandshakeTimeout: -1, EchoInterval: -1})
	return s, nil
}

// ctlSender queues the channel's messages with the batch's control replies.
type ctlSender struct{ s *emuSwitch }

func (c ctlSender) Send(m openflow.Message) error {
	b, err := m.AppendBinary(c.s.ctl)
	if err == nil {
		c.s.ctl = b
	}
	return err
}

// readBatch reads once (blocking) and calls handle for every whole message
// now buffered, then writes the control replies the batch produced.
func (s *emuSwitch) readBatch(handle func(msg []byte)) error {
	if s.r > 0 && s.r == s.w {
		s.r, s.w = 0, 0
	}
	if len(s.buf)-s.w < openflow.MaxMessageLen {
		s.w = copy(s.buf, s.buf[s.r:s.w])
		s.r = 0
	}
	n, err := s.nc.Read(s.buf[s.w:])
	s.w += n
	for s.w-s.r >= openflow.HeaderLen {
		l := int(binary.BigEndian.Uint16(s.buf[s.r+2:]))
		if l < openflow.HeaderLen {
			return fmt.Errorf("switch %d: controller sent a message of length %d", s.idx+1, l)
		}
		if s.w-s.r < l {
			break
		}
		msg := s.buf[s.r : s.r+l]
		s.r += l
		// The channel takes the HELLO and echo traffic.
		if deliver, cerr := s.ch.Receive(msg); cerr != nil {
			if s.chErr == nil {
				s.chErr = fmt.Errorf("switch %d: %w", s.idx+1, cerr)
			}
		} else if deliver {
			handle(msg)
		}
	}
	if len(s.ctl) > 0 {
		_, werr := s.nc.Write(s.ctl)
		s.ctl = s.ctl[:0]
		if werr != nil && err == nil {
			err = werr
		}
	}
	if s.chErr != nil {
		return s.chErr
	}
	return err
}

// control answers what a switch must answer so that a controller keeps
// talking to it (cbench answers the same set), and counts responses.
func (s *emuSwitch) control(msg []byte) {
	xid := binary.BigEndian.Uint32(msg[4:8])
	switch openflow.Type(msg[1]) {
	case openflow.TypeFeaturesRequest:
		s.ctl, _ = s.featuresReply(xid).AppendBinary(s.ctl)
		s.featuresOK = true
	case openflow.TypeBarrierRequest:
		s.ctl, _ = (&openflow.BarrierReply{Header: openflow.Header{Xid: xid}}).AppendBinary(s.ctl)
	case openflow.TypeGetConfigRequest:
		s.ctl, _ = (&openflow.GetConfigReply{Header: openflow.Header{Xid: xid}, MissSendLen: openflow.DefaultMissSendLen}).AppendBinary(s.ctl)
	case openflow.TypeStatsRequest:
		s.statsReply(msg, xid)
	case openflow.TypeVendor:
		// No vendor extensions here; Open vSwitch tools fall back on this.
		s.ctl, _ = openflow.NewErrorFor(msg, openflow.ErrorTypeBadRequest, uint16(openflow.BadRequestBadVendor)).AppendBinary(s.ctl)
	case openflow.TypeFlowMod, openflow.TypePacketOut:
		if isResponse(msg) {
			s.responses.Add(1)
		}
	}
}

func (s *emuSwitch) featuresReply(xid uint32) *openflow.FeaturesReply {
	fr := &openflow.FeaturesReply{
		Header:       openflow.Header{Xid: xid},
		DatapathID:   s.dpid,
		NBuffers:     nBuffers,
		NTables:      1,
		Capabilities: openflow.CapFlowStats | openflow.CapTableStats | openflow.CapPortStats,
		Actions:      1<<openflow.ActionTypeOutput | 1<<openflow.ActionTypeSetVlanVID | 1<<openflow.ActionTypeStripVlan,
	}
	for p := 1; p <= s.cfg.Ports; p++ {
		fr.Ports = append(fr.Ports, openflow.PhyPort{
			PortNo: uint16(p),
			HWAddr: [6]byte{0x02, 0xff, byte(s.idx >> 8), byte(s.idx), byte(p >> 8), byte(p)},
			Name:   fmt.Sprintf("sw%d-p%d", s.idx+1, p),
			Curr:   openflow.PortFeature1GbFD | openflow.PortFeatureCopper,
		})
	}
	return fr
}

// statsReply answers DESC with a description and any other type with an
// empty reply of that type.
func (s *emuSwitch) statsReply(msg []byte, xid uint32) {
	if len(msg) < 12 {
		return
	}
	st := openflow.StatsType(binary.BigEndian.Uint16(msg[8:10]))
	if st == openflow.StatsTypeDesc {
		host, _ := os.Hostname()
		r := &openflow.StatsReply{Header: openflow.Header{Xid: xid}, Body: openflow.DescStats{
			MfrDesc: "pseudocong", HwDesc: "loadgen emulated switch", SwDesc: "pseudocong bench controller",
			SerialNum: fmt.Sprint(s.dpid), DpDesc: fmt.Sprintf("%s switch %d", host, s.idx+1)}}
		s.ctl, _ = r.AppendBinary(s.ctl)
		return
	}
	s.ctl = append(s.ctl, openflow.Version, byte(openflow.TypeStatsReply), 0, 12, 0, 0, 0, 0)
	binary.BigEndian.PutUint32(s.ctl[len(s.ctl)-4:], xid)
	s.ctl = append(s.ctl, msg[8], msg[9], 0, 0)
}

// setup runs the handshake (answering until the controller has asked for
// features) and the ARP phase (until the controller answered every
// gratuitous ARP, or the deadline, or ARPTimeout after the handshake).
func (s *emuSwitch) setup(deadline time.Time) error {
	_ = s.nc.SetDeadline(deadline)
	defer s.nc.SetDeadline(time.Time{})
	if err := s.ch.Start(); err != nil {
		return fmt.Errorf("switch %d: %w", s.idx+1, err)
	}
	_, err := s.nc.Write(s.ctl)
	s.ctl = s.ctl[:0]
	if err != nil {
		return fmt.Errorf("switch %d: send hello: %w", s.idx+1, err)
	}
	for !s.featuresOK {
		if err := s.readBatch(s.control); err != nil {
			return fmt.Errorf("switch %d: handshake: %w", s.idx+1, err)
		}
	}

	if t := s.cfg.ARPTimeout; t > 0 {
		if d := time.Now().Add(t); d.Before(deadline) {
			_ = s.nc.SetDeadline(d)
		}
	}

	var arps []byte
	for i := range s.cfg.MACs {
		arps = appendGratuitousARP(arps, s.idx, i, s.cfg.Ports, uint32(i+1))
	}
	// Write from another goroutine: the controller answers while we are
	// still sending, and someone must read those answers.
	wrote := make(chan error, 1)
	go func() {
		_, err := s.nc.Write(arps)
		wrote <- err
	}()
	want := uint64(s.cfg.MACs)
	for s.responses.Load() < want {
		if err = s.readBatch(s.control); err != nil {
			break
		}
	}
	_ = s.nc.SetDeadline(time.Now()) // release the writer if still blocked
	werr := <-wrote
	var ne net.Error
	switch {
	case err != nil && errors.As(err, &ne) && ne.Timeout():
		s.cfg.Logger.Warn("controller did not answer every gratuitous ARP in time; starting anyway",
			"switch", s.idx+1, "answered", s.responses.Load(), "sent", want)
	case err != nil:
		return fmt.Errorf("switch %d: ARP phase: %w", s.idx+1, err)
	case werr != nil && !(errors.As(werr, &ne) && ne.Timeout()):
		return fmt.Errorf("switch %d: send ARPs: %w", s.idx+1, werr)
	}
	return nil
}

// run sends PACKET_INs until stop is closed. In throughput mode a writer
// goroutine keeps the socket full while this goroutine counts responses.
func (s *emuSwitch) run(stop <-chan struct{}) error {
	if s.cfg.Mode == Latency {
		return s.runLatency(stop)
	}
	writeErr := make(chan error, 1)
	go func() {
		chunk := writeChunk * packetInLen
		for pos := 0; ; pos = (pos + chunk) % len(s.templates) {
			select {
			case <-stop:
				writeErr <- nil
				return
			default:
			}
			if _, err := s.nc.Write(s.templates[pos : pos+chunk]); err != nil {
				writeErr <- err
				return
			}
		}
	}()
	var err error
	for {
		if err = s.readBatch(s.control); err != nil {
			break
		}
	}
	werr := <-writeErr
	select {
	case <-stop:
		return nil // the error is the deadline that stopped us
	default:
	}
	if werr != nil {
		return fmt.Errorf("switch %d: send: %w", s.idx+1, werr)
	}
	return fmt.Errorf("switch %d: %w", s.idx+1, err)
}

// runLatency keeps exactly one PACKET_IN outstanding.
func (s *emuSwitch) runLatency(stop <-chan struct{}) error {
	next := 0
	send := func() error {
		_, err := s.nc.Write(s.templates[next*packetInLen : (next+1)*packetInLen])
		next = (next + 1) % templateCount
		return err
	}
	if err := send(); err != nil {
		return fmt.Errorf("switch %d: send: %w", s.idx+1, err)
	}
	for {
		_ = s.nc.SetReadDeadline(time.Now().Add(latencyTimeout))
		before := s.responses.Load()
		err := s.readBatch(s.control)
		select {
		case <-stop:
			return nil
		default:
		}
		var ne net.Error
		if err != nil && errors.As(err, &ne) && ne.Timeout() {
			s.timeouts.Add(1)
		} else if err != nil {
			return fmt.Errorf("switch %d: %w", s.idx+1, err)
		} else if s.responses.Load() == before {
			continue // not an answer (echo, barrier, ...)
		}
		if err := send(); err != nil {
			return fmt.Errorf("switch %d: send: %w", s.idx+1, err)
		}
	}
}
