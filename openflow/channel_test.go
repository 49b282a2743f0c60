package openflow

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/internal/clock"
)

type senderFunc func(Message) error

func (f senderFunc) Send(m Message) error { return f(m) }

// simLink is an in-memory control channel on a virtual clock, as a
// simulator wires one: what one side sends arrives at the other after
// delay, unless the link is cut.
type simLink struct {
	sim   *clock.Sim
	delay time.Duration
	cut   bool
	// sent records every message by sender ("ctl" or "sw"), in order.
	sent map[string][]Type
	// delivered records what each side delivered to its application.
	delivered map[string][]Type
}

func (l *simLink) out(name string, to **Channel) Sender {
	peer := map[string]string{"ctl": "sw", "sw": "ctl"}[name]
	return senderFunc(func(m Message) error {
		b, err := Marshal(m)
		if err != nil {
			return err
		}
		l.sent[name] = append(l.sent[name], m.MsgType())
		if l.cut {
			return nil
		}
		l.sim.AfterFunc(l.delay, func() {
			(*to).Activity()
			if deliver, err := (*to).Receive(b); deliver && err == nil {
				l.delivered[peer] = append(l.delivered[peer], Type(b[1]))
			}
		})
		return nil
	})
}

// TestChannelRolesOnSimClock runs both roles against each other on a
// virtual clock, no sockets: the handshake (HELLO, FEATURES, SET_CONFIG),
// the keepalive while the peer answers, and the failure when it stops.
func TestChannelRolesOnSimClock(t *testing.T) {
	sim := clock.NewSim(time.Unix(0, 0))
	l := &simLink{sim: sim, delay: time.Millisecond, sent: map[string][]Type{}, delivered: map[string][]Type{}}
	var ctl, sw *Channel
	var ctlUp, swUp []Established
	var ctlFail, swFail []error
	ctl = NewChannel(ChannelConfig{Role: RoleController, Clock: sim, Out: l.out("ctl", &sw),
		EchoInterval: time.Second, EchoTimeout: 500 * time.Millisecond, MissSendLen: 0xffff,
		OnEstablished: func(e Established) { ctlUp = append(ctlUp, e) },
		OnFailed:      func(err error) { ctlFail = append(ctlFail, err) }})
	// The switch's application answers FEATURES_REQUEST itself.
	var swOut Sender
	sw = NewChannel(ChannelConfig{Role: RoleSwitch, Clock: sim, Out: senderFunc(func(m Message) error { return swOut.Send(m) }),
		EchoInterval:  -1,
		OnEstablished: func(e Established) { swUp = append(swUp, e) },
		OnFailed:      func(err error) { swFail = append(swFail, err) }})
	swOut = l.out("sw", &ctl)
	if err := ctl.Start(); err != nil {
		t.Fatal(err)
	}
	if err := sw.Start(); err != nil {
		t.Fatal(err)
	}
	sim.RunFor(5 * time.Millisecond)
	if !sw.Established() || len(swUp) != 1 || swUp[0].Features != nil || swUp[0].Version != Version {
		t.Fatalf("switch: state %v, events %+v", sw.State(), swUp)
	}
	if ctl.State() != ChannelWaitFeatures {
		t.Fatalf("controller state %v, want wait-features", ctl.State())
	}
	if got := l.delivered["sw"]; !reflect.DeepEqual(got, []Type{TypeFeaturesRequest}) {
		t.Fatalf("switch application got %v, want the FEATURES_REQUEST", got)
	}
	if err := swOut.Send(&FeaturesReply{DatapathID: 0xab, NBuffers: 256, NTables: 1}); err != nil {
		t.Fatal(err)
	}
	sim.RunFor(5 * time.Millisecond)
	if !ctl.Established() || len(ctlUp) != 1 || ctlUp[0].Features == nil || ctlUp[0].Features.DatapathID != 0xab {
		t.Fatalf("controller: state %v, events %+v", ctl.State(), ctlUp)
	}
	wantCtl := []Type{TypeHello, TypeFeaturesRequest, TypeSetConfig}
	if got := l.sent["ctl"]; !reflect.DeepEqual(got, wantCtl) {
		t.Fatalf("controller sent %v, want %v", got, wantCtl)
	}
	if got := l.delivered["sw"]; !reflect.DeepEqual(got, []Type{TypeFeaturesRequest, TypeSetConfig}) {
		t.Fatalf("switch application got %v", got)
	}

	// Quiet link: the controller probes every EchoInterval of silence, the
	// switch's channel answers, nobody fails.
	sim.RunFor(10 * time.Second)
	probes := 0
	for _, ty := range l.sent["ctl"] {
		if ty == TypeEchoRequest {
			probes++
		}
	}
	if probes < 8 || probes > 10 {
		t.Fatalf("%d probes in 10 s of silence with a 1 s interval", probes)
	}
	if ctl.EchoRTT() != 2*time.Millisecond {
		t.Errorf("EchoRTT %v, want the link's 2 ms round trip", ctl.EchoRTT())
	}
	if len(ctlFail) != 0 || len(swFail) != 0 {
		t.Fatalf("failures on a live link: %v %v", ctlFail, swFail)
	}
	// Echo traffic never reaches the applications.
	if got := l.delivered["sw"]; len(got) != 2 {
		t.Fatalf("switch application got %v", got)
	}

	// Cut the link: within EchoInterval + EchoTimeout the controller fails.
	l.cut = true
	cutAt := sim.Elapsed()
	sim.RunFor(3 * time.Second)
	if len(ctlFail) != 1 || !errors.Is(ctlFail[0], ErrPeerDead) || !errors.Is(ctl.Err(), ErrPeerDead) {
		t.Fatalf("controller failures %v after the link was cut", ctlFail)
	}
	if ctl.State() != ChannelFailed {
		t.Fatalf("state %v", ctl.State())
	}
	_ = cutAt
	if sim.Pending() != 0 {
		t.Errorf("%d timers left after the failure", sim.Pending())
	}
}

// TestChannelKeepaliveTiming: the probe goes out exactly EchoInterval after
// the last sign of life, and a silent peer is dead exactly EchoTimeout
// later; Hold suspends the judgement.
func TestChannelKeepaliveTiming(t *testing.T) {
	sim := clock.NewSim(time.Unix(0, 0))
	var sent []time.Duration
	var failedAt time.Duration = -1
	c := NewChannel(ChannelConfig{Role: RoleSwitch, Clock: sim, EchoInterval: time.Second, EchoTimeout: 300 * time.Millisecond,
		Out: senderFunc(func(m Message) error {
			if m.MsgType() == TypeEchoRequest {
				sent = append(sent, sim.Elapsed())
			}
			return nil
		}),
		OnFailed: func(error) { failedAt = sim.Elapsed() }})
	_ = c.Start()
	if _, err := c.Receive(helloWith(1)); err != nil || !c.Established() {
		t.Fatalf("hello: %v, %v", err, c.State())
	}
	sim.RunFor(400 * time.Millisecond)
	c.Activity() // at 0.4 s
	c.Hold(true)
	sim.RunFor(5 * time.Second) // held: no probe, no failure
	if len(sent) != 0 || failedAt >= 0 {
		t.Fatalf("while held: probes at %v, failed at %v", sent, failedAt)
	}
	c.Hold(false) // at 5.4 s
	sim.RunFor(5 * time.Second)
	if !reflect.DeepEqual(sent, []time.Duration{6400 * time.Millisecond}) || failedAt != 6700*time.Millisecond {
		t.Fatalf("probes at %v, failed at %v; want a probe at 6.4 s and death at 6.7 s", sent, failedAt)
	}
}

// TestChannelHandshakeTimeout: a silent peer fails the handshake on the
// channel's clock.
func TestChannelHandshakeTimeout(t *testing.T) {
	sim := clock.NewSim(time.Unix(0, 0))
	var failed error
	c := NewChannel(ChannelConfig{Role: RoleController, Clock: sim, HandshakeTimeout: 2 * time.Second,
		Out: senderFunc(func(Message) error { return nil }), OnFailed: func(err error) { failed = err }})
	_ = c.Start()
	sim.RunFor(1999 * time.Millisecond)
	if failed != nil {
		t.Fatalf("failed early: %v", failed)
	}
	sim.RunFor(time.Millisecond)
	if !errors.Is(failed, ErrHandshakeTimeout) {
		t.Fatalf("failure %v, want ErrHandshakeTimeout", failed)
	}
}

// TestChannelMalformedHello: both roles answer a malformed or incompatible
// first message the same way: ERROR HELLO_FAILED/INCOMPATIBLE with an
// explanation, then failure (the owner closes). A peer's ERROR is not
// answered.
func TestChannelMalformedHello(t *testing.T) {
	malformed := rawMsg(TypeHello, 9, []byte{0, 1, 0, 200})
	malformed[0] = 4
	tests := []struct {
		name      string
		first     []byte
		wantReply bool
	}{
		{"bad element length", malformed, true},
		{"stray bytes", fixLen(append(helloWith(4, 1), 7)), true},
		{"version 0", helloWith(0), true},
		{"bitmap without 1.0", helloWith(4, 4), true},
		{"not a HELLO", rawMsg(TypeFeaturesReply, 9, make([]byte, 24)), true},
		{"peer's ERROR", rawMsg(TypeError, 9, []byte{0, 0, 0, 0}), false},
	}
	for _, role := range []Role{RoleSwitch, RoleController} {
		for _, tt := range tests {
			t.Run(role.String()+"/"+tt.name, func(t *testing.T) {
				var sent []Message
				var failed []error
				c := NewChannel(ChannelConfig{Role: role, Clock: clock.NewSim(time.Unix(0, 0)),
					Out:      senderFunc(func(m Message) error { sent = append(sent, m); return nil }),
					OnFailed: func(err error) { failed = append(failed, err) }})
				_ = c.Start()
				sent = nil
				deliver, err := c.Receive(tt.first)
				var hf *HelloFailedError
				if deliver || !errors.As(err, &hf) || len(failed) != 1 || failed[0] != err {
					t.Fatalf("deliver %v, err %v, OnFailed %v; want a *HelloFailedError reported once", deliver, err, failed)
				}
				if !tt.wantReply {
					if len(sent) != 0 {
						t.Fatalf("answered a peer's ERROR with %v", sent)
					}
					return
				}
				if len(sent) != 1 {
					t.Fatalf("sent %v, want one ERROR", sent)
				}
				e, ok := sent[0].(*ErrorMsg)
				if !ok || e.Type != ErrorTypeHelloFailed || e.Code != uint16(HelloFailedIncompatible) || e.Xid != xidOf(tt.first) || len(e.Data) == 0 {
					t.Fatalf("sent %+v, want HELLO_FAILED/INCOMPATIBLE with an explanation", sent[0])
				}
				if _, err := c.Receive(helloWith(1)); err == nil || c.State() != ChannelFailed {
					t.Fatalf("a failed channel accepted a HELLO: %v, %v", err, c.State())
				}
			})
		}
	}
}

// TestChannelBeforeFeatures: the controller role answers echoes and wrong
// versions while it waits for FEATURES_REPLY, drops other messages, and
// fails on an ERROR or an undecodable reply.
func TestChannelBeforeFeatures(t *testing.T) {
	start := func() (*Channel, *[]Message) {
		var sent []Message
		c := NewChannel(ChannelConfig{Role: RoleController, Clock: clock.NewSim(time.Unix(0, 0)),
			Out: senderFunc(func(m Message) error { sent = append(sent, m); return nil })})
		_ = c.Start()
		if _, err := c.Receive(helloWith(1)); err != nil {
			t.Fatal(err)
		}
		sent = nil
		return c, &sent
	}
	c, sent := start()
	for _, f := range [][]byte{rawMsg(TypeEchoRequest, 3, []byte("x")), fixLen(func() []byte { b := rawMsg(TypeEchoRequest, 4, nil); b[0] = 2; return b }()),
		rawMsg(TypePortStatus, 5, make([]byte, 56))} {
		if deliver, err := c.Receive(f); deliver || err != nil {
			t.Fatalf("frame %x: deliver %v, err %v", f, deliver, err)
		}
	}
	if len(*sent) != 2 || (*sent)[0].MsgType() != TypeEchoReply || (*sent)[1].MsgType() != TypeError ||
		(*sent)[1].(*ErrorMsg).Code != uint16(BadRequestBadVersion) {
		t.Fatalf("sent %v, want ECHO_REPLY and BAD_VERSION", *sent)
	}
	c, _ = start()
	if _, err := c.Receive(rawMsg(TypeError, 6, []byte{0, 1, 0, 0})); err == nil {
		t.Fatal("an ERROR instead of FEATURES_REPLY did not fail the handshake")
	}
	c, sent = start()
	if _, err := c.Receive(rawMsg(TypeFeaturesReply, 7, []byte{1})); err == nil || len(*sent) != 1 || (*sent)[0].MsgType() != TypeError {
		t.Fatalf("bad FEATURES_REPLY: err %v, sent %v", err, *sent)
	}
}
