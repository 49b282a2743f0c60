package openflow_test

import (
	"encoding/binary"
	"errors"
	"testing"

	of "github.com/pseudocong/pseudocong/openflow"
)

// withLen returns a copy of msg with its ofp_header.length set to len(msg),
// so that a test can shorten or extend a body and still frame correctly.
func withLen(msg []byte) []byte {
	b := append([]byte{}, msg...)
	if len(b) >= 4 {
		binary.BigEndian.PutUint16(b[2:4], uint16(len(b)))
	}
	return b
}

func golden(t *testing.T, name string) []byte { return mustHex(t, goldenMessageHex[name]) }

func TestUnmarshalRejects(t *testing.T) {
	var (
		lengthErr  *of.LengthError
		versionErr *of.VersionError
		typeErr    *of.UnknownTypeError
		actionErr  *of.ActionError
		unknownAct *of.UnknownActionError
		statsErr   *of.UnknownStatsTypeError
		valueErr   *of.BadValueError
	)
	isLen := func(err error) bool { return errors.As(err, &lengthErr) }
	isAction := func(err error) bool { return errors.As(err, &actionErr) && errors.As(err, &lengthErr) }

	flowMod := golden(t, "flow_mod")
	packetOut := golden(t, "packet_out_buffered")
	withAction := func(base []byte, action []byte) []byte { return withLen(append(append([]byte{}, base...), action...)) }

	tests := []struct {
		name  string
		in    []byte
		check func(error) bool
	}{
		{"empty", nil, isLen},
		{"short header", []byte{1, 0, 0, 8}, isLen},
		{"length below 8", []byte{1, 0, 0, 4, 0, 0, 0, 0}, isLen},
		{"length above bytes", []byte{1, 2, 0, 9, 0, 0, 0, 0}, isLen},
		{"length below bytes", []byte{1, 2, 0, 8, 0, 0, 0, 0, 0}, isLen},
		{"version 4 echo", []byte{4, 2, 0, 8, 0, 0, 0, 0}, func(err error) bool { return errors.As(err, &versionErr) && versionErr.Got == 4 }},
		{"unknown type 22", []byte{1, 22, 0, 8, 0, 0, 0, 0}, func(err error) bool { return errors.As(err, &typeErr) && typeErr.Type == 22 }},
		{"unknown type 99", []byte{1, 99, 0, 8, 0, 0, 0, 0}, func(err error) bool { return errors.As(err, &typeErr) }},
		{"features request with body", withLen([]byte{1, 5, 0, 0, 0, 0, 0, 0, 0}), isLen},
		{"barrier reply with body", withLen([]byte{1, 19, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}), isLen},
		{"set config short", withLen([]byte{1, 9, 0, 0, 0, 0, 0, 0, 0, 0}), isLen},
		{"features reply partial port", withLen(golden(t, "features_reply")[:32+47]), isLen},
		{"packet in short", withLen(golden(t, "packet_in")[:17]), isLen},
		{"flow removed long", withLen(append(golden(t, "flow_removed"), 0)), isLen},
		{"port status short", withLen(golden(t, "port_status")[:63]), isLen},
		{"port mod long", withLen(append(golden(t, "port_mod"), 0, 0, 0, 0, 0, 0, 0, 0)), isLen},
		{"vendor short", withLen([]byte{1, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0}), isLen},
		{"error short", withLen([]byte{1, 1, 0, 0, 0, 0, 0, 0, 0, 1}), isLen},
		{"flow mod action len 0", withAction(flowMod, []byte{0, 0, 0, 0, 0, 2, 0, 0}), isAction},
		{"flow mod action len 12", withAction(flowMod, []byte{0, 0, 0, 12, 0, 2, 0, 0, 0, 0, 0, 0}), isAction},
		{"flow mod action beyond list", withAction(flowMod, []byte{0, 0, 0, 16, 0, 2, 0, 0}), isAction},
		{"flow mod action trailing 4 bytes", withAction(flowMod, []byte{0, 0, 0, 8}), isAction},
		{"flow mod output with len 16", withAction(flowMod, make16(0, 16)), isAction},
		{"flow mod dl_src with len 8", withAction(flowMod, []byte{0, 4, 0, 8, 1, 2, 3, 4}), isAction},
		{"flow mod unknown action 12", withAction(flowMod, []byte{0, 12, 0, 8, 0, 0, 0, 0}),
			func(err error) bool {
				return errors.As(err, &unknownAct) && unknownAct.Type == 12 && errors.As(err, &actionErr)
			}},
		{"flow mod vendor action len 12", withAction(flowMod, []byte{0xff, 0xff, 0, 12, 0, 0, 0x23, 0x20, 1, 2, 3, 4}), isAction},
		{"flow mod vendor action len 4", withAction(flowMod, []byte{0xff, 0xff, 0, 4, 0, 0, 0x23, 0x20}), isAction},
		{"flow mod vendor action short", withAction(flowMod, []byte{0xff, 0xff, 0, 8, 0, 0, 0x23}), isAction},
		{"packet out actions_len beyond message", func() []byte {
			b := append([]byte{}, packetOut...)
			binary.BigEndian.PutUint16(b[14:16], 200)
			return b
		}(), isLen},
		{"packet out actions_len not multiple of 8", func() []byte {
			b := append([]byte{}, packetOut...)
			binary.BigEndian.PutUint16(b[14:16], 4)
			return b
		}(), isAction},
		{"stats request unknown type", withLen([]byte{1, 16, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0}),
			func(err error) bool { return errors.As(err, &statsErr) && statsErr.Type == 9 }},
		{"stats request desc with body", withLen([]byte{1, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}), isLen},
		{"stats request flow short", withLen(golden(t, "stats_request_flow")[:55]), isLen},
		{"stats request port long", withLen(append(golden(t, "stats_request_port"), 0)), isLen},
		{"stats request queue short", withLen(golden(t, "stats_request_queue")[:19]), isLen},
		{"stats request vendor short", withLen(golden(t, "stats_request_vendor")[:15]), isLen},
		{"stats reply desc short", withLen(golden(t, "stats_reply_desc")[:100]), isLen},
		{"stats reply flow entry length 0", func() []byte {
			b := golden(t, "stats_reply_flow")
			binary.BigEndian.PutUint16(b[12:14], 0)
			return b
		}(), isLen},
		{"stats reply flow entry length beyond", func() []byte {
			b := golden(t, "stats_reply_flow")
			binary.BigEndian.PutUint16(b[12:14], 0xfff0)
			return b
		}(), isLen},
		{"stats reply flow truncated entry", withLen(golden(t, "stats_reply_flow")[:12+96+40]), isLen},
		{"stats reply flow bad action", func() []byte {
			b := golden(t, "stats_reply_flow")
			binary.BigEndian.PutUint16(b[12+88+2:], 9) // action len 9
			return b
		}(), isAction},
		{"stats reply aggregate long", withLen(append(golden(t, "stats_reply_aggregate"), 0)), isLen},
		{"stats reply table partial", withLen(golden(t, "stats_reply_table")[:12+63]), isLen},
		{"stats reply port partial", withLen(golden(t, "stats_reply_port")[:12+105]), isLen},
		{"stats reply queue partial", withLen(golden(t, "stats_reply_queue")[:12+31]), isLen},
		{"stats reply vendor short", withLen(golden(t, "stats_reply_vendor")[:14]), isLen},
		{"queue config request long", withLen(append(golden(t, "queue_get_config_request"), 0)), isLen},
		{"queue config reply queue len 0", func() []byte {
			b := golden(t, "queue_get_config_reply")
			binary.BigEndian.PutUint16(b[16+4:], 0)
			return b
		}(), isLen},
		{"queue config reply queue len beyond", func() []byte {
			b := golden(t, "queue_get_config_reply")
			binary.BigEndian.PutUint16(b[16+4:], 1000)
			return b
		}(), isLen},
		{"queue config reply min rate len 8", func() []byte {
			b := golden(t, "queue_get_config_reply")
			binary.BigEndian.PutUint16(b[16+8+2:], 8)
			return b
		}(), isLen},
		{"queue config reply unknown property", func() []byte {
			b := golden(t, "queue_get_config_reply")
			binary.BigEndian.PutUint16(b[16+8:], 7)
			return b
		}(), func(err error) bool { return errors.As(err, &valueErr) && valueErr.Value == 7 }},
		{"queue config reply partial queue header", withLen(append(golden(t, "queue_get_config_reply"), 0, 0, 0, 1)), isLen},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := of.Unmarshal(tc.in)
			if err == nil {
				t.Fatalf("accepted % x as %#v", tc.in, m)
			}
			if !tc.check(err) {
				t.Fatalf("error %T %v is not of the expected kind", err, err)
			}
			if m != nil {
				t.Errorf("returned a message with the error")
			}
		})
	}
}

func make16(typ uint16, n uint16) []byte {
	b := make([]byte, 16)
	binary.BigEndian.PutUint16(b[0:], typ)
	binary.BigEndian.PutUint16(b[2:], n)
	return b
}

// TestHelloAnyVersion: version negotiation must see HELLOs of other versions.
func TestHelloAnyVersion(t *testing.T) {
	raw := []byte{4, 0, 0, 16, 0, 0, 0, 9, 0, 1, 0, 8, 0, 0, 0, 0x12}
	m, err := of.Unmarshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	h, ok := m.(*of.Hello)
	if !ok || h.Version != 4 || h.Xid != 9 || len(h.Elements) != 8 {
		t.Fatalf("got %#v", m)
	}
}

// TestDecodeTypeMismatch: a struct refuses bytes of another message type.
func TestDecodeTypeMismatch(t *testing.T) {
	var pi of.PacketIn
	err := pi.DecodeFromBytes(golden(t, "echo_reply"))
	var tm *of.TypeMismatchError
	if !errors.As(err, &tm) || tm.Want != of.TypePacketIn || tm.Got != of.TypeEchoReply {
		t.Fatalf("got %v", err)
	}
}

// TestEveryTruncationSafe cuts every golden message at every length
// (fixing the header length) and requires a typed error or a message that
// re-encodes to the cut bytes: never a panic, never silent data loss.
func TestEveryTruncationSafe(t *testing.T) {
	for name, h := range goldenMessageHex {
		full := mustHex(t, h)
		for n := 0; n < len(full); n++ {
			cut := full[:n]
			if n >= 4 {
				cut = withLen(cut)
			}
			m, err := of.Unmarshal(cut)
			if err != nil {
				continue
			}
			enc, err := of.Marshal(m)
			if err != nil || string(enc) != string(cut) {
				t.Errorf("%s cut to %d: decoded %T but re-encodes to %x (%v)", name, n, m, enc, err)
			}
		}
	}
}

func TestErrorCodeFor(t *testing.T) {
	tests := []struct {
		in       []byte
		wantType of.ErrorType
		wantCode uint16
	}{
		{[]byte{2, 2, 0, 8, 0, 0, 0, 0}, of.ErrorTypeBadRequest, uint16(of.BadRequestBadVersion)},
		{[]byte{1, 30, 0, 8, 0, 0, 0, 0}, of.ErrorTypeBadRequest, uint16(of.BadRequestBadType)},
		{withLen([]byte{1, 5, 0, 0, 0, 0, 0, 0, 0}), of.ErrorTypeBadRequest, uint16(of.BadRequestBadLen)},
		{withLen(append(golden(t, "flow_mod"), 0, 0, 0, 12, 0, 2, 0, 0, 0, 0, 0, 0)), of.ErrorTypeBadAction, uint16(of.BadActionBadLen)},
		{withLen(append(golden(t, "flow_mod"), 0, 13, 0, 8, 0, 0, 0, 0)), of.ErrorTypeBadAction, uint16(of.BadActionBadType)},
		{withLen([]byte{1, 16, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0}), of.ErrorTypeBadRequest, uint16(of.BadRequestBadStat)},
	}
	for _, tc := range tests {
		_, err := of.Unmarshal(tc.in)
		if err == nil {
			t.Fatalf("% x accepted", tc.in)
		}
		typ, code := of.ErrorCodeFor(err)
		if typ != tc.wantType || code != tc.wantCode {
			t.Errorf("% x: %v -> %v/%s, want %v/%s", tc.in, err, typ, of.CodeString(typ, code), tc.wantType, of.CodeString(tc.wantType, tc.wantCode))
		}
	}
}

func TestNewErrorFor(t *testing.T) {
	req := golden(t, "flow_mod_all_actions") // longer than 64 bytes
	e := of.NewErrorFor(req, of.ErrorTypeFlowModFailed, uint16(of.FlowModFailedAllTablesFull))
	if e.Xid != 17 {
		t.Errorf("xid %d, want 17", e.Xid)
	}
	if len(e.Data) != 64 || string(e.Data) != string(req[:64]) {
		t.Errorf("data %x, want first 64 bytes of the request", e.Data)
	}
	req[0] = 0x55
	if e.Data[0] == 0x55 {
		t.Error("Data aliases the request")
	}
	raw, err := of.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	want := "0101004c00000011" + "00030000"
	if got := mustHex(t, want); string(raw[:12]) != string(got) {
		t.Errorf("header+type+code %x, want %s", raw[:12], want)
	}
	short := of.NewErrorFor([]byte{1, 2, 0}, of.ErrorTypeBadRequest, uint16(of.BadRequestBadLen))
	if short.Xid != 0 || len(short.Data) != 3 {
		t.Errorf("short request: %+v", short)
	}
	if s := e.Error(); s != "openflow: peer error FLOW_MOD_FAILED/ALL_TABLES_FULL (xid 17)" {
		t.Errorf("Error() = %q", s)
	}
}

func TestEnumStrings(t *testing.T) {
	tests := []struct {
		got, want string
	}{
		{of.ErrorTypeHelloFailed.String(), "HELLO_FAILED"},
		{of.ErrorTypeQueueOpFailed.String(), "QUEUE_OP_FAILED"},
		{of.ErrorType(9).String(), "ERROR_TYPE_9"},
		{of.HelloFailedEPerm.String(), "EPERM"},
		{of.BadRequestBufferUnknown.String(), "BUFFER_UNKNOWN"},
		{of.BadActionBadQueue.String(), "BAD_QUEUE"},
		{of.FlowModFailedUnsupported.String(), "UNSUPPORTED"},
		{of.PortModFailedBadHwAddr.String(), "BAD_HW_ADDR"},
		{of.QueueOpFailedEPerm.String(), "EPERM"},
		{of.CodeString(of.ErrorTypeBadAction, 4), "BAD_OUT_PORT"},
		{of.CodeString(of.ErrorTypePortModFailed, 0), "BAD_PORT"},
		{of.CodeString(of.ErrorType(77), 3), "CODE_3"},
		{of.BadRequestCode(20).String(), "CODE_20"},
		{of.ActionTypeEnqueue.String(), "ENQUEUE"},
		{of.ActionTypeVendor.String(), "VENDOR"},
		{of.StatsTypeQueue.String(), "QUEUE"},
		{of.StatsTypeVendor.String(), "VENDOR"},
		{of.TypeQueueGetConfigReply.String(), "QUEUE_GET_CONFIG_REPLY"},
		{of.FlowModCommandName(of.FlowModDeleteStrict), "DELETE_STRICT"},
		{of.PortName(of.PortController), "CONTROLLER"},
		{of.PortName(7), "7"},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
