package sim

import (
	"fmt"
	"time"

	"github.com/pseudocong/pseudocong/agent"
	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/profile"
	"github.com/pseudocong/pseudocong/softswitch/flowtable"
	"github.com/pseudocong/pseudocong/tcam"
)

// simSwitch is the switch of paper 000 Fig. 1 assembled from the project's
// sans-I/O parts: flowtable (the full OpenFlow table: the chip's on-chip
// memory / the agent's software table), a tcam.Mirror in front of it (the
// 4 000-entry TCAM cache, cycle-counted), and agent (the local CPU that
// builds and batches Packet-Ins and runs every Flow-Mod and TCAM write).
//
//	frame ─► TCAM hit ─────────────────────────────► output after hit_delay
//	       └ miss ─► backing-table hit ─► CPU job: swap into TCAM ─► output
//	                └ miss ─► CPU builds Packet-In ─► batch ─► controller
//	FLOW_MOD ─► CPU job: apply to table, write TCAM (c_write + s·c_move)
//	          ─► buffered packet output after hit_delay
type simSwitch struct {
	clk      *clock.Sim
	prof     *profile.Profile
	extra    InstallModel
	cpu      *agent.Agent
	cache    *tcam.Mirror
	table    *flowtable.Table
	toCtrl   *Channel
	ports    map[uint16]func(frame []byte)
	hitDelay time.Duration

	buffers    map[uint32]buffered
	nextBuffer uint32
	// swapping maps a backing-table entry being swapped into the TCAM to
	// the packets waiting for it.
	swapping map[uint64][]buffered
	// inTCAM says which backing-table entries the TCAM holds.
	inTCAM map[uint64]bool
	xid    uint32

	stats SwitchStats
}

type buffered struct {
	frame  []byte
	inPort uint16
}

// maxBuffers bounds the packets held for the controller (OVS keeps 256;
// beyond that a Packet-In carries the whole frame and no buffer id).
const maxBuffers = 4096

// missSendLen is OFPCML default: the bytes of a buffered packet a
// Packet-In carries.
const missSendLen = 128

// SwitchStats counts the switch's work in one run.
type SwitchStats struct {
	Hits, Misses, SwapIns uint64
	FlowMods, PacketOuts  uint64
	FlowModErrors         uint64
	BufferOverflows       uint64
	Evictions             uint64
	UnknownBuffer         uint64
	Dropped               uint64 // frames with no output
	TCAMMoves             int64
	MaxInstallCPU         time.Duration
}

// InstallModel is the part of the TCAM driver's cost that tcam.Timing does
// not express (see docs/calibration.md): when fewer than SlowFreeSlots
// slots are free, each moved entry costs SlowMove instead of the profile's
// driver_per_move. Zero values switch it off.
type InstallModel struct {
	SlowFreeSlots int
	SlowMove      time.Duration
}

func newSimSwitch(clk *clock.Sim, prof *profile.Profile, extra InstallModel, toCtrl *Channel) (*simSwitch, error) {
	layout, err := prof.TCAMLayout()
	if err != nil {
		return nil, err
	}
	t, err := tcam.New(prof.TCAM.Capacity, layout, prof.TCAM.Timing)
	if err != nil {
		return nil, err
	}
	mirror, err := tcam.NewMirror(t, 0)
	if err != nil {
		return nil, err
	}
	s := &simSwitch{
		clk:      clk,
		prof:     prof,
		extra:    extra,
		cache:    mirror,
		table:    flowtable.New(flowtable.Config{}),
		toCtrl:   toCtrl,
		ports:    map[uint16]func([]byte){},
		hitDelay: prof.Forwarding.HitDelay,
		buffers:  map[uint32]buffered{},
		swapping: map[uint64][]buffered{},
		inTCAM:   map[uint64]bool{},
	}
	s.cpu, err = agent.New(clk, prof.Agent, agent.OutputFunc(s.sendPacketIns), nil)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// attach connects a port to the link that carries its output.
func (s *simSwitch) attach(port uint16, out func(frame []byte)) { s.ports[port] = out }

// preinstall puts a rule in the backing table and, when inTCAM, in the
// TCAM, free of cost: the state before a run starts.
func (s *simSwitch) preinstall(fm *openflow.FlowMod, inTCAM bool) error {
	res, err := s.table.Apply(fm, s.clk.Now())
	if err != nil {
		return err
	}
	if res.Added == nil {
		return fmt.Errorf("preinstall: flow-mod added no entry")
	}
	if inTCAM {
		if _, err := s.cache.Insert(res.Added.TCAMEntry()); err != nil {
			return fmt.Errorf("preinstall into TCAM: %w", err)
		}
		s.inTCAM[res.Added.ID] = true
	}
	return nil
}

// receive is a frame arriving on a port.
func (s *simSwitch) receive(inPort uint16, frame []byte) {
	f, _ := flowtable.Extract(frame, inPort)
	if te, ok := s.cache.Lookup(f.Key()); ok {
		s.stats.Hits++
		e, _ := s.table.Get(te.ID)
		s.forward(e, inPort, frame)
		return
	}
	if e := s.table.Lookup(&f); e != nil {
		s.swapIn(e, buffered{frame, inPort})
		return
	}
	s.stats.Misses++
	s.packetIn(inPort, frame)
}

// forward applies an entry's output actions after the hit delay.
func (s *simSwitch) forward(e *flowtable.Entry, inPort uint16, frame []byte) {
	s.table.Hit(e, len(frame), s.clk.Now())
	s.output(e.Actions, inPort, frame)
}

func (s *simSwitch) output(actions []openflow.Action, inPort uint16, frame []byte) {
	sent := false
	for _, a := range actions {
		out, ok := a.(openflow.ActionOutput)
		if !ok {
			continue
		}
		port := out.Port
		if port == openflow.PortInPort {
			port = inPort
		}
		if link, ok := s.ports[port]; ok {
			s.clk.AfterFunc(s.hitDelay, func() { link(frame) })
			sent = true
		}
	}
	if !sent {
		s.stats.Dropped++
	}
}

// swapIn brings a backing-table entry into the TCAM on the local CPU; the
// packets that missed the TCAM wait for it (paper §3.2: "swapped in from
// the chip's on-chip memory").
func (s *simSwitch) swapIn(e *flowtable.Entry, pkt buffered) {
	if waiting, busy := s.swapping[e.ID]; busy {
		s.swapping[e.ID] = append(waiting, pkt)
		return
	}
	s.stats.SwapIns++
	s.swapping[e.ID] = []buffered{pkt}
	id := e.ID
	s.cpu.Submit(agent.Job{
		Kind:  "swap_in",
		Start: func() time.Duration { return s.installTCAM(id) },
		Done: func() {
			waiting := s.swapping[id]
			delete(s.swapping, id)
			if e, ok := s.table.Get(id); ok {
				for _, p := range waiting {
					s.forward(e, p.inPort, p.frame)
				}
			}
		},
	})
}

// installTCAM writes entry id into the TCAM, evicting the least recently
// used entry if the TCAM is full, and returns the local-CPU time it takes.
func (s *simSwitch) installTCAM(id uint64) time.Duration {
	e, ok := s.table.Get(id)
	if !ok || s.inTCAM[id] {
		return 0
	}
	var cpu time.Duration
	if s.cache.TCAM().Full() {
		cpu += s.evict()
	}
	free := s.cache.TCAM().Capacity() - s.cache.TCAM().Len()
	c, err := s.cache.Insert(e.TCAMEntry())
	if err != nil {
		s.stats.FlowModErrors++
		return cpu
	}
	s.inTCAM[id] = true
	s.stats.TCAMMoves += c.Moves
	t := s.prof.TCAM.Timing.CPUTime(c)
	if s.extra.SlowMove > 0 && free <= s.extra.SlowFreeSlots {
		t += time.Duration(c.Moves) * (s.extra.SlowMove - s.prof.TCAM.Timing.DriverPerMove)
	}
	cpu += t
	s.stats.MaxInstallCPU = max(s.stats.MaxInstallCPU, cpu)
	return cpu
}

// evict removes the least recently used TCAM entry (it stays in the
// backing table) and returns the CPU time of the invalidate.
func (s *simSwitch) evict() time.Duration {
	var victim *flowtable.Entry
	for _, te := range s.cache.TCAM().Entries() {
		e, ok := s.table.Get(te.ID)
		if !ok {
			continue
		}
		if victim == nil || e.LastUsed.Before(victim.LastUsed) ||
			(e.LastUsed.Equal(victim.LastUsed) && e.ID < victim.ID) {
			victim = e
		}
	}
	if victim == nil {
		return 0
	}
	c, err := s.cache.Delete(victim.ID)
	if err != nil {
		return 0
	}
	delete(s.inTCAM, victim.ID)
	s.stats.Evictions++
	return s.prof.TCAM.Timing.CPUTime(c)
}

// packetIn hands a miss to the local CPU, buffering the packet.
func (s *simSwitch) packetIn(inPort uint16, frame []byte) {
	pin := agent.PacketIn{TotalLen: uint16(len(frame)), InPort: inPort, Reason: openflow.PacketInReasonNoMatch}
	if len(s.buffers) < maxBuffers {
		s.nextBuffer++
		pin.BufferID = s.nextBuffer
		s.buffers[pin.BufferID] = buffered{frame, inPort}
		pin.Data = frame[:min(len(frame), missSendLen)]
	} else {
		s.stats.BufferOverflows++
		pin.BufferID = openflow.NoBuffer
		pin.Data = frame
	}
	if !s.cpu.Miss(pin) && pin.BufferID != openflow.NoBuffer {
		delete(s.buffers, pin.BufferID)
	}
}

// sendPacketIns is the agent's output: each Packet-In of a batch goes on
// the control channel as OFPT_PACKET_IN bytes.
func (s *simSwitch) sendPacketIns(batch []agent.PacketIn) {
	for _, p := range batch {
		s.xid++
		msg := &openflow.PacketIn{
			Header:   openflow.Header{Xid: s.xid},
			BufferID: p.BufferID, TotalLen: p.TotalLen, InPort: p.InPort, Reason: p.Reason, Data: p.Data,
		}
		_ = s.toCtrl.Send(msg) // encoding a well-formed Packet-In cannot fail
	}
}

// fromController handles a message arriving on the control channel.
func (s *simSwitch) fromController(m openflow.Message) {
	switch msg := m.(type) {
	case *openflow.FlowMod:
		s.flowMod(msg)
	case *openflow.PacketOut:
		s.packetOut(msg)
	}
}

// flowMod runs as one job on the local CPU: the table change and its TCAM
// write are priced when the CPU picks the job up (so the shift count is
// that of the table at that moment); the buffered packet leaves when the
// job is done.
func (s *simSwitch) flowMod(fm *openflow.FlowMod) {
	s.stats.FlowMods++
	var added uint64
	s.cpu.Submit(agent.Job{
		Kind: "flow_mod",
		Start: func() time.Duration {
			res, err := s.table.Apply(fm, s.clk.Now())
			if err != nil || res.Added == nil {
				s.stats.FlowModErrors++
				return 0
			}
			added = res.Added.ID
			return s.installTCAM(added)
		},
		Done: func() {
			if fm.BufferID == openflow.NoBuffer {
				return
			}
			pkt, ok := s.buffers[fm.BufferID]
			if !ok {
				s.stats.UnknownBuffer++
				return
			}
			delete(s.buffers, fm.BufferID)
			if e, ok := s.table.Get(added); ok {
				s.forward(e, pkt.inPort, pkt.frame)
			}
		},
	})
}

// packetOut sends a packet (buffered or carried) with the given actions; it
// is agent work too, queued behind earlier Flow-Mods.
func (s *simSwitch) packetOut(po *openflow.PacketOut) {
	s.stats.PacketOuts++
	s.cpu.Submit(agent.Job{
		Kind: "packet_out",
		Done: func() {
			frame, inPort := po.Data, po.InPort
			if po.BufferID != openflow.NoBuffer {
				pkt, ok := s.buffers[po.BufferID]
				if !ok {
					s.stats.UnknownBuffer++
					return
				}
				delete(s.buffers, po.BufferID)
				frame, inPort = pkt.frame, pkt.inPort
			}
			s.output(po.Actions, inPort, frame)
		},
	})
}
