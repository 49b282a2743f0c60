package pipeline

import (
	"encoding/binary"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/pseudocong/pseudocong/internal/clock"
	"github.com/pseudocong/pseudocong/openflow"
	"github.com/pseudocong/pseudocong/profile"
	"github.com/pseudocong/pseudocong/softswitch"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// recChannel records what the switch sends to the controller, with the
// (modelled) time it was sent.
type recChannel struct {
	clk clock.Clock
	// countOnly keeps counts by type instead of the messages (storms).
	countOnly bool
	mu        sync.Mutex
	msgs      []timedMsg
	counts    map[openflow.Type]int
}

type timedMsg struct {
	at time.Time
	m  openflow.Message
}

func (c *recChannel) Role() softswitch.Role { return softswitch.RoleController }

func (c *recChannel) Send(m openflow.Message) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.countOnly {
		if c.counts == nil {
			c.counts = map[openflow.Type]int{}
		}
		c.counts[m.MsgType()]++
		return nil
	}
	c.msgs = append(c.msgs, timedMsg{c.clk.Now(), m})
	return nil
}

func (c *recChannel) take() []timedMsg {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.msgs
	c.msgs = nil
	return m
}

// delivery is one frame out of port 2, tagged with the sequence number the
// test wrote into its payload.
type delivery struct {
	at  time.Time
	seq uint32
}

// rig is a switch on a simulated clock with ports 1 (in) and 2 (out) and a
// controller channel; pipeline nil means the ideal seams.
type rig struct {
	t   testing.TB
	sim *clock.Sim
	sw  *softswitch.Switch
	p   *Pipeline
	reg *prometheus.Registry
	ctl *recChannel

	mu  sync.Mutex
	out []delivery
}

// newRig builds the rig. prof nil means no pipeline (ideal seams).
func newRig(t testing.TB, prof *profile.Profile, opts Options) *rig {
	t.Helper()
	sim := clock.NewSim(t0)
	r := &rig{t: t, sim: sim, reg: prometheus.NewRegistry(), ctl: &recChannel{clk: sim}}
	cfg := softswitch.Config{}
	if prof != nil {
		cfg.TableCapacity = TableCapacity(prof, opts.BackingCapacity)
		cfg.TieBreak = TieBreak(prof)
	}
	r.sw = softswitch.New(sim, cfg)
	in := softswitch.NewMemPort(1, "p1", softswitch.MemPortMAC(1, 1), nil)
	out := softswitch.NewMemPort(2, "p2", softswitch.MemPortMAC(1, 2), func(frame []byte) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.out = append(r.out, delivery{at: sim.Now(), seq: binary.BigEndian.Uint32(frame[len(frame)-4:])})
	})
	for _, p := range []softswitch.Port{in, out} {
		if err := r.sw.AddPort(p); err != nil {
			t.Fatal(err)
		}
	}
	r.sw.Attach(r.ctl)
	if prof != nil {
		opts.Profile = prof
		opts.Registerer = r.reg
		p, err := Attach(r.sw, opts)
		if err != nil {
			t.Fatal(err)
		}
		r.p = p
		t.Cleanup(p.Stop)
	}
	r.ctl.take() // PORT_STATUS of the ports
	return r
}

func loadProfile(t testing.TB, name string, edit func(*profile.Profile)) *profile.Profile {
	t.Helper()
	p, err := profile.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(p)
	}
	return p
}

func (r *rig) send(m openflow.Message) { r.sw.HandleMessage(r.ctl, m) }

// at schedules f at virtual offset d from the start.
func (r *rig) at(d time.Duration, f func()) { r.sim.At(t0.Add(d), f) }

func (r *rig) run() { r.sim.Run() }

func (r *rig) deliveries() []delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]delivery(nil), r.out...)
}

// host i has address 10.1.(i>>8).(i&255); rule i matches its source.
func hostIP(i int) uint32 { return 0x0a010000 | uint32(i&0xffff) }

// frame is a UDP packet from host i whose payload ends with seq.
func frame(t testing.TB, i int, seq uint32) []byte {
	t.Helper()
	var src [4]byte
	binary.BigEndian.PutUint32(src[:], hostIP(i))
	ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: layers.IPProtocolUDP,
		SrcIP: net.IP(src[:]), DstIP: net.IP{10, 2, 0, 1}}
	udp := &layers.UDP{SrcPort: 1000, DstPort: 2000}
	_ = udp.SetNetworkLayerForChecksum(ip)
	// 20 payload bytes keep the frame above the 60-byte Ethernet minimum,
	// so no padding follows seq.
	payload := binary.BigEndian.AppendUint32(make([]byte, 16), seq)
	buf := gopacket.NewSerializeBuffer()
	err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
		&layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2},
			EthernetType: layers.EthernetTypeIPv4}, ip, udp, gopacket.Payload(payload))
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// ruleFor matches the packets of host i (IPv4, nw_src exact) and outputs
// them on port 2.
func ruleFor(i int, prio uint16) *openflow.FlowMod {
	m := openflow.Match{Wildcards: openflow.WildcardAll &^ (openflow.WildcardDlType | openflow.WildcardNwSrcMask),
		DlType: 0x0800, NwSrc: hostIP(i)}
	return &openflow.FlowMod{Header: openflow.Header{Version: openflow.Version, Type: openflow.TypeFlowMod, Xid: uint32(i)},
		Match: m, Command: openflow.FlowModAdd, Priority: prio, BufferID: openflow.NoBuffer,
		OutPort: openflow.PortNone, Actions: []openflow.Action{openflow.ActionOutput{Port: 2}}}
}

func barrier(xid uint32) *openflow.BarrierRequest {
	return &openflow.BarrierRequest{Header: openflow.Header{Version: openflow.Version, Type: openflow.TypeBarrierRequest, Xid: xid}}
}

// metricFamily returns the gathered family by full name.
func metricFamily(t *testing.T, reg prometheus.Gatherer, name string) *dto.MetricFamily {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf
		}
	}
	t.Fatalf("metric %s not registered", name)
	return nil
}

// labelled returns the metric of a family whose labels include want.
func labelled(t *testing.T, mf *dto.MetricFamily, want map[string]string) *dto.Metric {
	t.Helper()
	for _, m := range mf.GetMetric() {
		ok := true
		for k, v := range want {
			found := false
			for _, lp := range m.GetLabel() {
				if lp.GetName() == k && lp.GetValue() == v {
					found = true
				}
			}
			ok = ok && found
		}
		if ok {
			return m
		}
	}
	t.Fatalf("%s has no series with labels %v", mf.GetName(), want)
	return nil
}

// insertHistogram is the flow_mod series of the insert-latency histogram.
func insertHistogram(t *testing.T, reg prometheus.Gatherer) *dto.Histogram {
	mf := metricFamily(t, reg, "pseudocong_tcam_insert_latency_seconds")
	return labelled(t, mf, map[string]string{"cause": "flow_mod"}).GetHistogram()
}

func counterValue(t *testing.T, reg prometheus.Gatherer, name string, labels map[string]string) float64 {
	return labelled(t, metricFamily(t, reg, name), labels).GetCounter().GetValue()
}
