# Generates ../golden_vectors_test.go: cd openflow && python3 testdata/golden_gen.py --go > golden_vectors_test.go && gofmt -w golden_vectors_test.go
# Independent encoder for golden vectors: struct layouts transcribed from
# openflow.h (OpenFlow 1.0.0). Prints name -> hex.
import struct
def hdr(t, n, xid): return struct.pack("!BBHI", 1, t, n, xid)
def msg(t, xid, body): return hdr(t, 8+len(body), xid) + body
def match(w, in_port=0, dl_src=b"\0"*6, dl_dst=b"\0"*6, dl_vlan=0, pcp=0, dl_type=0, tos=0, proto=0, nw_src=0, nw_dst=0, tp_src=0, tp_dst=0):
    return struct.pack("!IH6s6sHBxHBBxxIIHH", w, in_port, dl_src, dl_dst, dl_vlan, pcp, dl_type, tos, proto, nw_src, nw_dst, tp_src, tp_dst)
def phy(no, hw, name, config, state, curr, adv, sup, peer):
    return struct.pack("!H6s16sIIIIII", no, hw, name, config, state, curr, adv, sup, peer)
A = {}
A['output'] = struct.pack("!HHHH", 0, 8, 2, 0)
A['output_ctrl'] = struct.pack("!HHHH", 0, 8, 0xfffd, 0xffff)
A['vlan_vid'] = struct.pack("!HHH2x", 1, 8, 0x123)
A['vlan_pcp'] = struct.pack("!HHB3x", 2, 8, 5)
A['strip'] = struct.pack("!HH4x", 3, 8)
A['dl_src'] = struct.pack("!HH6s6x", 4, 16, bytes([0,0x11,0x22,0x33,0x44,0x55]))
A['dl_dst'] = struct.pack("!HH6s6x", 5, 16, bytes([0xaa,0xbb,0xcc,0xdd,0xee,0xff]))
A['nw_src'] = struct.pack("!HHI", 6, 8, 0x0a000001)
A['nw_dst'] = struct.pack("!HHI", 7, 8, 0xc0a80102)
A['nw_tos'] = struct.pack("!HHB3x", 8, 8, 0xb8)
A['tp_src'] = struct.pack("!HHH2x", 9, 8, 8080)
A['tp_dst'] = struct.pack("!HHH2x", 10, 8, 443)
A['enqueue'] = struct.pack("!HHH6xI", 11, 16, 3, 7)
A['vendor'] = struct.pack("!HHI", 0xffff, 16, 0x2320) + bytes([0,1,2,3,4,5,6,7])

WALL = (1<<22)-1
# tcp to 10.0.0.2:80 from in_port 1, nw_src 10.0.0.0/24
w_tcp = WALL & ~(0x1|0x10|0x20|0x80) & ~(0x3f<<8) & ~(0x3f<<14)
w_tcp |= (8<<8)   # nw_src: 8 low bits wildcarded -> /24
m_tcp = match(w_tcp, in_port=1, dl_type=0x0800, proto=6, nw_src=0x0a000000, nw_dst=0x0a000002, tp_dst=80)
m_exact = match(0, in_port=3, dl_src=bytes([0,0,0,0,0,1]), dl_dst=bytes([0,0,0,0,0,2]), dl_vlan=0xffff, pcp=0, dl_type=0x0800, tos=0, proto=1, nw_src=0x0a000001, nw_dst=0x0a000002, tp_src=8, tp_dst=0)
m_all = match(WALL)

M = {}
M['hello'] = msg(0, 1, b"")
M['hello_elements'] = msg(0, 2, struct.pack("!HHI", 1, 8, 0x12))
M['error'] = msg(1, 3, struct.pack("!HH", 1, 6) + hdr(14, 72, 9))
M['echo_request'] = msg(2, 4, bytes.fromhex("deadbeef"))
M['echo_reply'] = msg(3, 5, b"")
M['vendor'] = msg(4, 6, struct.pack("!I", 0x2320) + struct.pack("!I", 11))
M['features_request'] = msg(5, 7, b"")
port1 = phy(1, bytes([2,0,0,0,0,1]), b"eth1", 0x1, 0x200, 0x2a0, 0x2a0, 0x2af, 0)
portL = phy(0xfffe, bytes([2,0,0,0,0,0xfe]), b"br0", 0x1, 0x1, 0, 0, 0, 0)
M['features_reply'] = msg(6, 8, struct.pack("!QIB3xII", 42, 256, 254, 0xc7, 0xfff) + port1 + portL)
M['get_config_request'] = msg(7, 9, b"")
M['get_config_reply'] = msg(8, 10, struct.pack("!HH", 0, 128))
M['set_config'] = msg(9, 11, struct.pack("!HH", 2, 0xffff))
frame = bytes.fromhex("ffffffffffff000000000001080600010800060400010000000000010a0000010000000000000a000002")
M['packet_in'] = msg(10, 0, struct.pack("!IHHBx", 0x102, 60, 3, 0) + frame)
M['flow_removed'] = msg(11, 12, m_tcp + struct.pack("!QHBxIIH2xQQ", 0x1122334455667788, 100, 2, 30, 500000000, 10, 7, 980))
M['port_status'] = msg(12, 13, struct.pack("!B7x", 2) + port1)
M['packet_out'] = msg(13, 14, struct.pack("!IHH", 0xffffffff, 1, 16) + A['output'] + A['strip'] + frame)
M['packet_out_buffered'] = msg(13, 15, struct.pack("!IHH", 0x102, 3, 8) + A['output'])
M['flow_mod'] = msg(14, 16, m_tcp + struct.pack("!QHHHHIHH", 0xabcdef, 0, 10, 30, 100, 0xffffffff, 0xffff, 1) + A['output'])
M['flow_mod_all_actions'] = msg(14, 17, m_exact + struct.pack("!QHHHHIHH", 0, 1, 0, 0, 0x8000, 0x102, 0xffff, 6) +
    b"".join(A[k] for k in ['output','output_ctrl','vlan_vid','vlan_pcp','strip','dl_src','dl_dst','nw_src','nw_dst','nw_tos','tp_src','tp_dst','enqueue','vendor']))
M['flow_mod_delete'] = msg(14, 18, m_all + struct.pack("!QHHHHIHH", 0, 3, 0, 0, 0, 0xffffffff, 0xffff, 0))
M['port_mod'] = msg(15, 19, struct.pack("!H6sIII4x", 1, bytes([2,0,0,0,0,1]), 0x11, 0x11, 0x2a0))
def sreq(xid, t, flags, body): return msg(16, xid, struct.pack("!HH", t, flags) + body)
def srep(xid, t, flags, body): return msg(17, xid, struct.pack("!HH", t, flags) + body)
M['stats_request_desc'] = sreq(20, 0, 0, b"")
M['stats_request_flow'] = sreq(21, 1, 0, m_all + struct.pack("!BxH", 0xff, 0xffff))
M['stats_request_aggregate'] = sreq(22, 2, 0, m_tcp + struct.pack("!BxH", 0, 2))
M['stats_request_table'] = sreq(23, 3, 0, b"")
M['stats_request_port'] = sreq(24, 4, 0, struct.pack("!H6x", 0xffff))
M['stats_request_queue'] = sreq(25, 5, 0, struct.pack("!H2xI", 0xfffc, 0xffffffff))
M['stats_request_vendor'] = sreq(26, 0xffff, 0, struct.pack("!I", 0x2320) + bytes([0,0,0,1]))
M['stats_reply_desc'] = srep(27, 0, 0, struct.pack("!256s256s256s32s256s", b"Nicira, Inc.", b"Open vSwitch", b"3.1.0", b"None", b"br0"))
fs1 = struct.pack("!HBx", 88+8, 0) + m_tcp + struct.pack("!IIHHH6xQQQ", 12, 345, 100, 10, 30, 0xabcdef, 5, 370) + A['output']
fs2 = struct.pack("!HBx", 88, 0) + m_all + struct.pack("!IIHHH6xQQQ", 1, 2, 0, 0, 0, 0, 0, 0)
M['stats_reply_flow'] = srep(28, 1, 1, fs1 + fs2)
M['stats_reply_flow_empty'] = srep(29, 1, 0, b"")
M['stats_reply_aggregate'] = srep(30, 2, 0, struct.pack("!QQI4x", 1000, 64000, 12))
M['stats_reply_table'] = srep(31, 3, 0, struct.pack("!B3x32sIIIQQ", 0, b"classifier", WALL, 1000000, 12, 5000, 4900))
M['stats_reply_port'] = srep(32, 4, 0, struct.pack("!H6x12Q", 1, *range(1, 13)) + struct.pack("!H6x12Q", 0xfffe, *([0xffffffffffffffff]*12)))
M['stats_reply_queue'] = srep(33, 5, 0, struct.pack("!H2xIQQQ", 1, 7, 1500, 1, 0))
M['stats_reply_vendor'] = srep(34, 0xffff, 0, struct.pack("!I", 0x2320) + bytes(range(8)))
M['barrier_request'] = msg(18, 35, b"")
M['barrier_reply'] = msg(19, 35, b"")
M['queue_get_config_request'] = msg(20, 36, struct.pack("!H2x", 1))
q1 = struct.pack("!HH4xH6x", 1, 16, 500)
q0 = struct.pack("!HH4x", 0, 8)
M['queue_get_config_reply'] = msg(21, 37, struct.pack("!H6x", 1) + struct.pack("!IH2x", 7, 8+16) + q1 + struct.pack("!IH2x", 8, 8+8) + q0 + struct.pack("!IH2x", 9, 8))
import sys
if "--go" in sys.argv:
    print("// Code generated by testdata/golden_gen.py --go; DO NOT EDIT.")
    print("// The bytes come from an independent Python encoder whose struct")
    print("// layouts are transcribed from OpenFlow 1.0.0 openflow.h.")
    print()
    print("package openflow_test")
    print()
    print("var goldenActionHex = map[string]string{")
    for k, v in A.items():
        print("\t\"%s\": \"%s\"," % (k, v.hex()))
    print("}")
    print()
    print("var goldenMessageHex = map[string]string{")
    for k, v in M.items():
        print("\t\"%s\": \"%s\"," % (k, v.hex()))
    print("}")
else:
    for k, v in A.items():
        print("A", k, v.hex())
    for k, v in M.items():
        print("M", k, v.hex())
