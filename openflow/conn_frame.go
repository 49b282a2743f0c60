package openflow

import (
	"bufio"
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

// frameReader cuts an OpenFlow byte stream into whole messages, however the
// stream was segmented: several messages per read and messages split
// across reads are both normal.
//
// Memory is bounded by construction: the length field is 16 bits, the
// bufio buffer is fixed at 64 KiB, and nothing is allocated from a length
// before the bytes have actually arrived.
type frameReader struct {
	br     *bufio.Reader
	maxLen int
	// slab is the current arena. Frames are copied out of the bufio
	// buffer into it so that decoded messages may keep sub-slices of them
	// (payloads) after the bufio buffer is reused, at the price of one
	// allocation per 64 KiB instead of one per message. off is the first
	// free byte, last the size of the latest frame (for releaseLast).
	slab      []byte
	off, last int
}

func newFrameReader(r io.Reader, maxLen int) *frameReader {
	if maxLen <= 0 || maxLen > MaxMessageLen {
		maxLen = MaxMessageLen
	}
	return &frameReader{br: bufio.NewReaderSize(r, frameArenaSize), maxLen: maxLen}
}

// next returns the next whole frame. The returned slice is not
// overwritten by later calls unless it is handed back with releaseLast. Errors: io.EOF at a clean message boundary,
// io.ErrUnexpectedEOF inside a message, *FramingError (fatal),
// *FrameTooLongError (the frame was skipped; reading may continue), or the
// underlying read error.
func (f *frameReader) next() ([]byte, error) {
	hdr, err := f.br.Peek(HeaderLen)
	if err != nil {
		return nil, eofInside(err, len(hdr))
	}
	n := int(binary.BigEndian.Uint16(hdr[2:4]))
	if n < HeaderLen {
		fe := &FramingError{}
		copy(fe.Header[:], hdr)
		return nil, fe
	}
	b, err := f.br.Peek(n)
	if err != nil {
		return nil, eofInside(err, len(b))
	}
	if n > f.maxLen {
		e := &FrameTooLongError{Length: n, Max: f.maxLen, Prefix: append([]byte(nil), b[:min(n, 64)]...)}
		_, _ = f.br.Discard(n) // cannot fail: the bytes are buffered
		return nil, e
	}
	frame := f.alloc(n)
	copy(frame, b)
	_, _ = f.br.Discard(n)
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
