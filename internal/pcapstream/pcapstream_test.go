package pcapstream

import (
	"bytes"
	"testing"
)

const goldenPcap = "/work/shared/testdata/of10-ovs-and-ovs-testcontroller.pcap"

func TestReadFileGolden(t *testing.T) {
	streams, err := ReadFile(goldenPcap)
	if err != nil {
		t.Fatal(err)
	}
	if len(streams) < 2 {
		t.Fatalf("got %d streams, want at least the two directions of the OpenFlow session", len(streams))
	}
	for _, s := range streams {
		msgs, rest, err := SplitOpenFlow(s.Data)
		if err != nil {
			t.Errorf("%v: %v", &s, err)
		}
		if len(rest) != 0 {
			t.Errorf("%v: %d trailing bytes", &s, len(rest))
		}
		if len(msgs) == 0 || msgs[0][1] != 0 { // every OpenFlow stream starts with HELLO
			t.Errorf("%v: first message is not a HELLO", &s)
		}
	}
}

func TestSplitOpenFlow(t *testing.T) {
	hello := []byte{1, 0, 0, 8, 0, 0, 0, 1}
	echo := []byte{1, 2, 0, 10, 0, 0, 0, 2, 0xaa, 0xbb}
	tests := []struct {
		name     string
		in       []byte
		wantMsgs int
		wantRest int
		wantErr  bool
	}{
		{"empty", nil, 0, 0, false},
		{"two whole", append(append([]byte{}, hello...), echo...), 2, 0, false},
		{"truncated tail", append(append([]byte{}, hello...), echo[:9]...), 1, 9, false},
		{"short header tail", append(append([]byte{}, hello...), 1, 0, 0), 1, 3, false},
		{"bad length", append(append([]byte{}, hello...), 1, 0, 0, 4, 0, 0, 0, 0), 1, 8, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msgs, rest, err := SplitOpenFlow(tc.in)
			if len(msgs) != tc.wantMsgs || len(rest) != tc.wantRest || (err != nil) != tc.wantErr {
				t.Fatalf("got %d msgs, %d rest, err %v; want %d, %d, err %v", len(msgs), len(rest), err, tc.wantMsgs, tc.wantRest, tc.wantErr)
			}
			if tc.wantMsgs > 0 && !bytes.Equal(msgs[0], hello) {
				t.Errorf("first message %x, want %x", msgs[0], hello)
			}
		})
	}
}

func TestReassembleOrdersAndDropsRetransmissions(t *testing.T) {
	const isn uint32 = 0xfffffff0 // the sequence number wraps around during the stream
	first := isn + 1
	fl := &flow{isn: isn, haveSYN: true}
	fl.segments = []segment{
		{seq: first + 4, data: []byte("efgh")},
		{seq: first, data: []byte("abcd")},
		{seq: first + 2, data: []byte("cdef")}, // overlap
		{seq: first + 4, data: []byte("efgh")}, // retransmission
		{seq: first + 8, data: []byte("ij")},
	}
	s, err := fl.reassemble()
	if err != nil {
		t.Fatal(err)
	}
	if string(s.Data) != "abcdefghij" {
		t.Fatalf("got %q", s.Data)
	}
	fl.segments = append(fl.segments, segment{seq: first + 20, data: []byte("z")})
	if _, err := fl.reassemble(); err == nil {
		t.Fatal("gap not reported")
	}
}
