package openflow

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"time"
)

// HelloFailedError is returned by Handshake when the peer shares no
// version with us (we then sent it HELLO_FAILED/INCOMPATIBLE and closed)
// or when the peer itself refused the handshake.
type HelloFailedError struct {
	PeerVersion uint8
	Reason      string
}

func (e *HelloFailedError) Error() string {
	return fmt.Sprintf("openflow: hello failed (peer version 0x%02x): %s", e.PeerVersion, e.Reason)
}

// helloElemVersionBitmap is OFPHET_VERSIONBITMAP (OpenFlow 1.3.1+).
const helloElemVersionBitmap = 1

// Handshake sends our HELLO, reads the peer's and negotiates OpenFlow 1.0,
// then starts the connection's goroutines. It is bounded by ctx and by
// HandshakeTimeout. A peer that offers no 1.0 (by its header version or,
// for OpenFlow 1.3+ peers, its version bitmap) gets
// ERROR HELLO_FAILED/INCOMPATIBLE with an explanation, and the connection
// is closed. On any failure the connection is closed and Err says why.
func (c *Conn) Handshake(ctx context.Context) error {
	if !c.handshaking.CompareAndSwap(false, true) {
		return errors.New("openflow: Handshake called twice")
	}
	err := c.handshake(ctx)
	if err != nil {
		c.shutdown(err)
		return err
	}
	if !c.start() {
		return c.sendErr()
	}
	return nil
}

func (c *Conn) handshake(ctx context.Context) error {
	deadline := time.Now().Add(c.cfg.HandshakeTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = c.nc.SetDeadline(deadline)
	// Cancelling ctx interrupts the blocking I/O below.
	stop := context.AfterFunc(ctx, func() { _ = c.nc.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	// Write our HELLO concurrently with reading theirs: on a synchronous
	// transport (net.Pipe) both sides writing first would deadlock.
	hello := appendHeader(make([]byte, 0, HeaderLen), TypeHello, HeaderLen, c.NextXid())
	wrote := make(chan error, 1)
	go func() {
		_, err := c.nc.Write(hello)
		wrote <- err
	}()

	frame, rerr := c.fr.next()
	if rerr != nil {
		rerr = fmt.Errorf("openflow: handshake: read peer hello: %w", ctxErr(ctx, rerr))
		_ = c.nc.SetDeadline(time.Unix(1, 0)) // release the writer
		<-wrote
		return rerr
	}
	if werr := <-wrote; werr != nil {
		return fmt.Errorf("openflow: handshake: send hello: %w", ctxErr(ctx, werr))
	}
	c.stats.msgsIn.Add(1)
	c.stats.bytesIn.Add(uint64(len(frame)))

	if err := c.checkPeerHello(frame); err != nil {
		return err
	}
	if !stop() && ctx.Err() != nil {
		return fmt.Errorf("openflow: handshake: %w", ctx.Err())
	}
	_ = c.nc.SetDeadline(time.Time{})
	return nil
}

// checkPeerHello negotiates on the peer's first message; on failure it
// tells the peer why (best effort) before the caller closes.
func (c *Conn) checkPeerHello(frame []byte) error {
	h, _ := DecodeHeader(frame) // the frame reader checked the length
	if h.Type == TypeError && h.Version == Version {
		// The peer refused us first (typically HELLO_FAILED).
		var e ErrorMsg
		if err := e.DecodeFromBytes(frame); err == nil {
			return &HelloFailedError{PeerVersion: h.Version, Reason: fmt.Sprintf("peer sent ERROR %v %s: %q",
				e.Type, CodeString(e.Type, e.Code), printable(e.Data))}
		}
	}
	var reason string
	if h.Type != TypeHello {
		reason = fmt.Sprintf("expected HELLO, got message type %d", uint8(h.Type))
	} else if ok, why := negotiateVersion(frame); !ok {
		reason = why
	} else {
		return nil
	}
	e := &ErrorMsg{
		Header: Header{Xid: h.Xid},
		Type:   ErrorTypeHelloFailed,
		Code:   uint16(HelloFailedIncompatible),
		Data:   []byte("We support version 0x01 (OpenFlow 1.0) only; " + reason),
	}
	if b, err := e.AppendBinary(nil); err == nil {
		_ = c.nc.SetWriteDeadline(time.Now().Add(c.cfg.CloseTimeout))
		_, _ = c.nc.Write(b)
	}
	return &HelloFailedError{PeerVersion: h.Version, Reason: reason}
}

// negotiateVersion decides whether the peer whose HELLO is frame speaks
// OpenFlow 1.0. OpenFlow 1.0 negotiation takes the smaller of the two
// header versions, so any peer version >= 1 agrees on 1.0 unless the peer
// sent a version bitmap (OpenFlow 1.3.1+), which then rules: bit 1 must be
// set. A malformed element list is ignored, as Open vSwitch does.
func negotiateVersion(frame []byte) (ok bool, reason string) {
	v := frame[0]
	if v == 0 {
		return false, "peer offers only version 0x00"
	}
	bitmap, found := helloVersionBitmap(frame[HeaderLen:])
	if !found {
		return true, ""
	}
	if len(bitmap) > 0 && bitmap[0]&(1<<Version) != 0 {
		return true, ""
	}
	return false, fmt.Sprintf("peer's version bitmap %s excludes 0x01", formatBitmap(bitmap))
}

// helloVersionBitmap extracts the OFPHET_VERSIONBITMAP element from the
// hello elements in body.
func helloVersionBitmap(body []byte) ([]uint32, bool) {
	for len(body) >= 4 {
		typ := binary.BigEndian.Uint16(body[0:2])
		n := int(binary.BigEndian.Uint16(body[2:4]))
		if n < 4 || n > len(body) {
			return nil, false
		}
		if typ == helloElemVersionBitmap {
			words := (n - 4) / 4
			bm := make([]uint32, words)
			for i := range bm {
				bm[i] = binary.BigEndian.Uint32(body[4+4*i:])
			}
			return bm, true
		}
		// Elements are padded to a multiple of 8 bytes.
		n = (n + 7) &^ 7
		if n > len(body) {
			return nil, false
		}
		body = body[n:]
	}
	return nil, false
}

func formatBitmap(bm []uint32) string {
	s := "{"
	for i, w := range bm {
		for bit := 0; bit < 32; bit++ {
			if w&(1<<bit) != 0 {
				if len(s) > 1 {
					s += ","
				}
				s += fmt.Sprintf("0x%02x", 32*i+bit)
			}
		}
	}
	return s + "}"
}

// printable keeps an error's ASCII explanation short and safe for logs.
func printable(b []byte) string {
	if len(b) > 128 {
		b = b[:128]
	}
	out := make([]byte, 0, len(b))
	for _, ch := range b {
		if ch >= 0x20 && ch < 0x7f {
			out = append(out, ch)
		} else {
			out = append(out, '.')
		}
	}
	return string(out)
}

// ctxErr adds the context's error to the I/O error it caused, so callers
// can test errors.Is(err, context.DeadlineExceeded). The socket deadline
// may fire a moment before the context's own timer, hence the clock check.
func ctxErr(ctx context.Context, err error) error {
	if ce := ctx.Err(); ce != nil {
		return errors.Join(ce, err)
	}
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) && errors.Is(err, os.ErrDeadlineExceeded) {
		return errors.Join(context.DeadlineExceeded, err)
	}
	return err
}
