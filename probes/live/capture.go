package live

import (
	"bufio"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// Capture writes frames to a pcap file (Ethernet link type) that
// Wireshark and tshark read. It is safe for concurrent use.
type Capture struct {
	mu   sync.Mutex
	f    *os.File
	buf  *bufio.Writer
	w    *pcapgo.Writer
	n    int
	errs int
}

// captureSnaplen keeps whole frames.
const captureSnaplen = 65535

// CreateCapture creates (truncates) path and writes the pcap header.
func CreateCapture(path string) (*Capture, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	buf := bufio.NewWriterSize(f, 1<<16)
	w := pcapgo.NewWriterNanos(buf)
	if err := w.WriteFileHeader(captureSnaplen, layers.LinkTypeEthernet); err != nil {
		f.Close()
		return nil, fmt.Errorf("capture %s: header: %w", path, err)
	}
	return &Capture{f: f, buf: buf, w: w}, nil
}

// Write records one frame seen (sent or received) at time at.
func (c *Capture) Write(frame []byte, at time.Time) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.w == nil {
		return
	}
	ci := gopacket.CaptureInfo{Timestamp: at, CaptureLength: len(frame), Length: len(frame)}
	if err := c.w.WritePacket(ci, frame); err != nil {
		c.errs++
		return
	}
	c.n++
}

// Frames is the number of frames written so far.
func (c *Capture) Frames() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// Close flushes and closes the file.
func (c *Capture) Close() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.w == nil {
		return nil
	}
	c.w = nil
	ferr := c.buf.Flush()
	cerr := c.f.Close()
	if ferr != nil {
		return fmt.Errorf("capture: flush: %w", ferr)
	}
	if cerr != nil {
		return fmt.Errorf("capture: close: %w", cerr)
	}
	if c.errs > 0 {
		return fmt.Errorf("capture: %d frames failed to write", c.errs)
	}
	return nil
}
