package openflow

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// rawMsg builds a version-1 frame of the given type, xid and body.
func rawMsg(t Type, xid uint32, body []byte) []byte {
	b := appendHeader(nil, t, HeaderLen+len(body), xid)
	return append(b, body...)
}

// withLen overwrites the header length field of a copy of b.
func withLen(b []byte, n uint16) []byte {
	c := append([]byte(nil), b...)
	binary.BigEndian.PutUint16(c[2:4], n)
	return c
}

func TestFrameReaderSegmentation(t *testing.T) {
	var stream []byte
	var want [][]byte
	for i := range 50 {
		m := rawMsg(TypeEchoRequest, uint32(i+1), bytes.Repeat([]byte{byte(i)}, i*37))
		want = append(want, m)
		stream = append(stream, m...)
	}
	// A maximal frame too: the buffer must hold 65535 bytes at once.
	big := rawMsg(TypePacketIn, 99, make([]byte, MaxMessageLen-HeaderLen))
	want = append(want, big)
	stream = append(stream, big...)

	readers := map[string]func() io.Reader{
		"one write":     func() io.Reader { return bytes.NewReader(stream) },
		"byte by byte":  func() io.Reader { return iotest.OneByteReader(bytes.NewReader(stream)) },
		"half messages": func() io.Reader { return iotest.HalfReader(bytes.NewReader(stream)) },
	}
	for name, mk := range readers {
		t.Run(name, func(t *testing.T) {
			fr := newFrameReader(mk(), 0)
			var got [][]byte
			for {
				f, err := fr.next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatalf("frame %d: %v", len(got), err)
				}
				got = append(got, f)
			}
			if len(got) != len(want) {
				t.Fatalf("got %d frames, want %d", len(got), len(want))
			}
			// Checked after reading everything: earlier frames must not
			// have been overwritten by later reads.
			for i := range want {
				if !bytes.Equal(got[i], want[i]) {
					t.Fatalf("frame %d differs", i)
				}
			}
		})
	}
}

func TestFrameReaderErrors(t *testing.T) {
	good := rawMsg(TypeHello, 1, nil)
	tests := []struct {
		name    string
		stream  []byte
		maxLen  int
		check   func(error) bool
		goodAft bool // the next frame is still readable
	}{
		{"empty stream", nil, 0, func(e error) bool { return e == io.EOF }, false},
		{"partial header", good[:5], 0, func(e error) bool { return e == io.ErrUnexpectedEOF }, false},
		{"truncated body", withLen(good, 100), 0, func(e error) bool { return e == io.ErrUnexpectedEOF }, false},
		{"huge length, few bytes", withLen(rawMsg(TypePacketIn, 1, make([]byte, 100)), 0xffff), 0,
			func(e error) bool { return e == io.ErrUnexpectedEOF }, false},
		{"length below header", withLen(good, 4), 0, func(e error) bool {
			var fe *FramingError
			return errors.As(e, &fe) && binary.BigEndian.Uint16(fe.Header[2:4]) == 4
		}, false},
		{"length zero", withLen(good, 0), 0, func(e error) bool { var fe *FramingError; return errors.As(e, &fe) }, false},
		{"over configured max", append(rawMsg(TypeEchoRequest, 7, make([]byte, 200)), good...), 100, func(e error) bool {
			var tl *FrameTooLongError
			return errors.As(e, &tl) && tl.Length == 208 && len(tl.Prefix) == 64 && binary.BigEndian.Uint32(tl.Prefix[4:8]) == 7
		}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fr := newFrameReader(bytes.NewReader(tc.stream), tc.maxLen)
			_, err := fr.next()
			if !tc.check(err) {
				t.Fatalf("unexpected error %v", err)
			}
			if tc.goodAft {
				f, err := fr.next()
				if err != nil || !bytes.Equal(f, good) {
					t.Fatalf("after skipped frame: %x, %v", f, err)
				}
			}
		})
	}
}

// FuzzFrameReader feeds arbitrary streams: framing must never panic, never
// return a frame whose header disagrees with its size, and never exceed
// the 16-bit length.
func FuzzFrameReader(f *testing.F) {
	f.Add(rawMsg(TypeHello, 1, nil))
	f.Add(append(rawMsg(TypeEchoRequest, 2, []byte("abc")), withLen(rawMsg(TypeHello, 3, nil), 2)...))
	f.Add([]byte{1, 0, 0xff, 0xff, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, stream []byte) {
		fr := newFrameReader(iotest.HalfReader(bytes.NewReader(stream)), 1000)
		total := 0
		for {
			b, err := fr.next()
			var tl *FrameTooLongError
			if errors.As(err, &tl) {
				continue
			}
			if err != nil {
				return
			}
			if len(b) < HeaderLen || int(binary.BigEndian.Uint16(b[2:4])) != len(b) || len(b) > 1000 {
				t.Fatalf("bad frame %x", b)
			}
			total += len(b)
			if total > len(stream) {
				t.Fatalf("returned more bytes than the stream had")
			}
			_, _ = Unmarshal(b) // must not panic either
		}
	})
}

// TestFrameReaderSmallBufferAndBuffered: the exported reader starting from
// a tiny buffer grows as frames need, skips an over-long frame that is
// larger than its buffer, and Buffered says exactly when Next will not
// read.
func TestFrameReaderSmallBufferAndBuffered(t *testing.T) {
	var stream []byte
	var want [][]byte
	for i := range 30 {
		m := rawMsg(TypeEchoRequest, uint32(i+1), bytes.Repeat([]byte{byte(i)}, i*101))
		if i == 10 {
			// Over the limit below, and longer than the initial buffer.
			stream = append(stream, rawMsg(TypeVendor, 1000, make([]byte, 5000))...)
		}
		want = append(want, m)
		stream = append(stream, m...)
	}
	for name, mk := range map[string]func() io.Reader{
		"one write":    func() io.Reader { return bytes.NewReader(stream) },
		"byte by byte": func() io.Reader { return iotest.OneByteReader(bytes.NewReader(stream)) },
		"half":         func() io.Reader { return iotest.HalfReader(bytes.NewReader(stream)) },
	} {
		t.Run(name, func(t *testing.T) {
			cr := &countingReader{r: mk()}
			fr := NewFrameReader(cr, 4000, 16)
			var got [][]byte
			skipped := 0
			for {
				before := cr.reads
				buffered := fr.Buffered()
				f, err := fr.Next()
				if buffered && cr.reads != before {
					t.Fatalf("Buffered said true but Next read")
				}
				var tl *FrameTooLongError
				if errors.As(err, &tl) {
					skipped++
					continue
				}
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatalf("frame %d: %v", len(got), err)
				}
				got = append(got, append([]byte(nil), f...))
			}
			if skipped != 1 || len(got) != len(want) {
				t.Fatalf("got %d frames, %d skipped; want %d and 1", len(got), skipped, len(want))
			}
			for i := range want {
				if !bytes.Equal(got[i], want[i]) {
					t.Fatalf("frame %d differs", i)
				}
			}
		})
	}
}

type countingReader struct {
	r     io.Reader
	reads int
}

func (c *countingReader) Read(p []byte) (int, error) {
	c.reads++
	return c.r.Read(p)
}
