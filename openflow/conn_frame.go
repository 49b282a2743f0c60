package openflow

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// frameArenaSize is the size of the slabs frames are copied into. A frame
// is at most 65535 bytes, so one slab holds any frame.
const frameArenaSize = 64 << 10

// FramingError reports a header whose length field is below 8. The stream
// cannot be resynchronised after it, so the connection answers with
// BAD_REQUEST/BAD_LEN and closes.
type FramingError struct {
	Header [HeaderLen]byte
}

func (e *FramingError) Error() string {
	return fmt.Sprintf("openflow: framing: header length %d < %d (header % x)",
		binary.BigEndian.Uint16(e.Header[2:4]), HeaderLen, e.Header[:])
}

// FrameTooLongError reports a frame longer than the configured maximum. The
// frame has been skipped; the stream stays in sync.
type FrameTooLongError struct {
	Length int
	Max    int
	// Prefix is the start of the skipped frame (at most 64 bytes), for the
	// data field of the ERROR reply.
	Prefix []byte
}

func (e *FrameTooLongError) Error() string {
	return fmt.Sprintf("openflow: framing: message length %d exceeds limit %d", e.Length, e.Max)
}

// FrameReader cuts an OpenFlow byte stream into whole messages, however
// the stream was segmented: several messages per read and messages split
// across reads are both normal. It is the one framing code: openflow.Conn
// and the controller's TCP shell both read through one.
//
// Next returns a view into the reader's buffer, valid until the next call
// (zero-copy; copy what you keep). Buffered tells whether the next frame
// is already in the buffer, so that a caller batching its writes knows
// when a read may block. Memory is bounded by construction: the length
// field is 16 bits, the buffer grows on demand from its initial size to at
// most 64 KiB, and nothing is allocated from a length before the bytes of
// the frame have arrived (a frame longer than maxLen is skipped as it
// streams past, whatever its length).
type FrameReader struct {
	rd     io.Reader
	maxLen int
	buf    []byte
	r, w   int // buf[r:w] is unread
	skip   int // bytes of an over-long frame still to discard
}

// NewFrameReader reads frames from rd. maxLen bounds the frames returned
// (0 or above MaxMessageLen: MaxMessageLen); initial is the starting
// buffer size (at least HeaderLen; 0: 64 KiB).
func NewFrameReader(rd io.Reader, maxLen, initial int) *FrameReader {
	if maxLen <= 0 || maxLen > MaxMessageLen {
		maxLen = MaxMessageLen
	}
	if initial <= 0 || initial > frameArenaSize {
		initial = frameArenaSize
	}
	return &FrameReader{rd: rd, maxLen: maxLen, buf: make([]byte, max(initial, HeaderLen))}
}

// Next returns the next whole frame. Errors: io.EOF at a clean message
// boundary, io.ErrUnexpectedEOF inside a message, *FramingError (fatal:
// the stream cannot be resynchronised), *FrameTooLongError (the frame is
// skipped; reading may continue), or the underlying read error.
func (f *FrameReader) Next() ([]byte, error) {
	for {
		if f.skip > 0 {
			n := min(f.skip, f.w-f.r)
			f.r += n
			f.skip -= n
			if f.skip > 0 {
				if err := f.fill(f.skip); err != nil {
					return nil, eofInside(err, 1)
				}
				continue
			}
		}
		avail := f.w - f.r
		need := HeaderLen
		if avail >= HeaderLen {
			hdr := f.buf[f.r : f.r+HeaderLen]
			n := int(binary.BigEndian.Uint16(hdr[2:4]))
			switch {
			case n < HeaderLen:
				fe := &FramingError{}
				copy(fe.Header[:], hdr)
				return nil, fe
			case n > f.maxLen:
				if p := min(n, 64); avail >= p {
					e := &FrameTooLongError{Length: n, Max: f.maxLen, Prefix: append([]byte(nil), f.buf[f.r:f.r+p]...)}
					f.skip = n
					return nil, e
				}
				need = min(n, 64)
			case avail >= n:
				frame := f.buf[f.r : f.r+n : f.r+n]
				f.r += n
				return frame, nil
			default:
				need = n
			}
		}
		if err := f.fill(need); err != nil {
			return nil, eofInside(err, avail)
		}
	}
}

// Buffered reports whether a whole frame is already buffered, i.e. whether
// Next will return without reading.
func (f *FrameReader) Buffered() bool {
	if f.skip > 0 || f.w-f.r < HeaderLen {
		return false
	}
	n := int(binary.BigEndian.Uint16(f.buf[f.r+2 : f.r+4]))
	return n < HeaderLen || f.w-f.r >= min(n, 64) && n > f.maxLen || f.w-f.r >= n
}

// Grow makes the buffer at least n bytes (at most 64 KiB), so that a
// reader past a cheap phase (a handshake) reads in large batches.
func (f *FrameReader) Grow(n int) {
	n = min(n, frameArenaSize)
	if len(f.buf) < n {
		nb := make([]byte, n)
		f.w = copy(nb, f.buf[f.r:f.w])
		f.r = 0
		f.buf = nb
	}
}

// fill reads once, making room for a frame of need bytes (counted from
// the first unread byte; a skip needs only some room).
func (f *FrameReader) fill(need int) error {
	if f.r == f.w {
		f.r, f.w = 0, 0
	}
	if need > len(f.buf)-f.r {
		if f.skip > 0 || need <= len(f.buf) {
			f.w = copy(f.buf, f.buf[f.r:f.w])
			f.r = 0
		} else {
			f.Grow(max(need, 2*len(f.buf)))
		}
	}
	if f.w == len(f.buf) { // a skip with a full buffer: all of it is skippable
		f.r, f.w = 0, 0
	}
	for {
		n, err := f.rd.Read(f.buf[f.w:])
		f.w += n
		if n > 0 {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// frameReader is Conn's framing: a FrameReader whose frames are copied
// into an arena, so that decoded messages may keep sub-slices of them
// (payloads) after the read buffer is reused, at the price of one
// allocation per 64 KiB instead of one per message.
type frameReader struct {
	fr *FrameReader
	// slab is the current arena; off is its first free byte, last the
	// size of the latest frame (for releaseLast).
	slab      []byte
	off, last int
}

func newFrameReader(r io.Reader, maxLen int) *frameReader {
	return &frameReader{fr: NewFrameReader(r, maxLen, frameArenaSize)}
}

// next returns the next whole frame, which later calls do not overwrite
// unless it is handed back with releaseLast. Errors as FrameReader.Next.
func (f *frameReader) next() ([]byte, error) {
	b, err := f.fr.Next()
	if err != nil {
		return nil, err
	}
	frame := f.alloc(len(b))
	copy(frame, b)
	return frame, nil
}

// alloc carves n bytes out of the arena, starting a new slab when the
// current one is used up.
func (f *frameReader) alloc(n int) []byte {
	if len(f.slab)-f.off < n {
		f.slab, f.off = make([]byte, frameArenaSize), 0
	}
	b := f.slab[f.off : f.off+n : f.off+n]
	f.off += n
	f.last = n
	return b
}

// releaseLast gives the space of the frame returned by the latest next()
// back to the arena; the caller promises that nothing refers to it any
// more (it was rejected, or fully copied). A peer streaming garbage then
// reuses one slab instead of making us allocate per frame.
func (f *frameReader) releaseLast() {
	f.off -= f.last
	f.last = 0
}

// eofInside turns an EOF after a partial message into io.ErrUnexpectedEOF,
// so a truncated message is told apart from a clean close.
func eofInside(err error, got int) error {
	if errors.Is(err, io.EOF) && got > 0 {
		return io.ErrUnexpectedEOF
	}
	return err
}
