package afport

import (
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vishvananda/netlink"

	"github.com/pseudocong/pseudocong/internal/afsock"
	"github.com/pseudocong/pseudocong/openflow"
)

// Core is what a port needs of the switch: *softswitch.Switch satisfies
// it. Receive takes ownership of the frame.
type Core interface {
	Receive(inPort uint16, frame []byte)
	SetLinkDown(no uint16, down bool) error
}

// Options configures a Port.
type Options struct {
	// No is the OpenFlow port number (1..openflow.PortMax).
	No uint16
	// IfName is the Linux interface, in the calling thread's namespace.
	IfName string
	// TPacketVersion is the receive ring version, 2 (default: per-frame
	// wake-up, no added latency) or 3 (block-batched; adds up to the
	// block timeout per frame on a quiet link). See afsock.DefaultVersion.
	TPacketVersion int
	// BlockTimeout: TPACKET_V3's block retire timeout (default 1 ms).
	BlockTimeout time.Duration
	// Logger: default discard.
	Logger *slog.Logger
}

// Port is a switch port on a Linux interface. It implements
// softswitch.Port (No, Name, HWAddr, Transmit) and
// softswitch.PortFeatureser.
type Port struct {
	no     uint16
	name   string
	hwaddr [6]byte
	sock   *afsock.Socket
	log    *slog.Logger

	mu      sync.Mutex
	started bool
	done    chan struct{} // closed by Close: stops the link watcher
	wg      sync.WaitGroup
}

// Open opens the interface. The port does not deliver frames until Start.
func Open(o Options) (*Port, error) {
	if o.No == 0 || o.No > openflow.PortMax {
		return nil, fmt.Errorf("afport %s: port number %d outside 1..%d", o.IfName, o.No, openflow.PortMax)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	sock, err := afsock.Open(afsock.Options{IfName: o.IfName, Version: o.TPacketVersion, BlockTimeout: o.BlockTimeout, Promiscuous: true})
	if err != nil {
		return nil, err
	}
	p := &Port{
		no:   o.No,
		name: o.IfName,
		sock: sock,
		log:  o.Logger.With("port", o.No, "iface", o.IfName),
		done: make(chan struct{}),
	}
	copy(p.hwaddr[:], sock.HWAddr())
	return p, nil
}

// No implements softswitch.Port.
func (p *Port) No() uint16 { return p.no }

// Name implements softswitch.Port.
func (p *Port) Name() string { return p.name }

// HWAddr implements softswitch.Port.
func (p *Port) HWAddr() [6]byte { return p.hwaddr }

// Transmit implements softswitch.Port: one write to the socket. Frames
// shorter than an Ethernet header or longer than the interface MTU fail
// (counted by the switch as tx_dropped).
func (p *Port) Transmit(frame []byte) error { return p.sock.Write(frame) }

// Features implements softswitch.PortFeatureser: 10 Gb/s full duplex
// copper, the speed class of a veth (the kernel reports 10000 Mb/s).
func (p *Port) Features() (curr, advertised, supported, peer uint32) {
	f := uint32(openflow.PortFeature10GbFD | openflow.PortFeatureCopper)
	return f, f, f, 0
}

// Stats returns the socket's counters.
func (p *Port) Stats() afsock.Stats { return p.sock.Stats() }

// Start reports the current link state to core and starts delivering
// frames to core.Receive and link changes to core.SetLinkDown. Call it
// after adding the port to the switch.
func (p *Port) Start(core Core) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.started {
		return fmt.Errorf("afport %s: already started", p.name)
	}
	p.started = true

	updates := make(chan netlink.LinkUpdate, 16)
	if err := netlink.LinkSubscribeWithOptions(updates, p.done, netlink.LinkSubscribeOptions{
		ErrorCallback: func(err error) {
			select {
			case <-p.done: // closing the subscription makes its read fail
			default:
				p.log.Warn("link subscription", "err", err)
			}
		},
	}); err != nil {
		return fmt.Errorf("afport %s: subscribe to link changes: %w", p.name, err)
	}
	// Read the state after subscribing, so no change falls in between.
	if link, err := netlink.LinkByIndex(p.sock.Index()); err == nil {
		p.setLink(core, linkUp(link.Attrs()))
	}

	p.wg.Add(2)
	go func() {
		defer p.wg.Done()
		p.watchLink(core, updates)
	}()
	go func() {
		defer p.wg.Done()
		if err := p.sock.Run(func(frame []byte, _ time.Time) { core.Receive(p.no, frame) }); err != nil {
			p.log.Error("port receive stopped", "err", err)
		}
	}()
	return nil
}

func (p *Port) watchLink(core Core, updates <-chan netlink.LinkUpdate) {
	for {
		select {
		case <-p.done:
			return
		case u, ok := <-updates:
			if !ok {
				return
			}
			if int(u.Index) != p.sock.Index() {
				continue
			}
			if u.Header.Type == unix.RTM_DELLINK {
				p.setLink(core, false)
				continue
			}
			p.setLink(core, linkUp(u.Attrs()))
		}
	}
}

func (p *Port) setLink(core Core, up bool) {
	if err := core.SetLinkDown(p.no, !up); err != nil {
		p.log.Warn("set link state", "up", up, "err", err)
		return
	}
	p.log.Debug("link state", "up", up)
}

// linkUp is the link's carrier: administratively up and lower layer up.
func linkUp(a *netlink.LinkAttrs) bool {
	return a.Flags&net.FlagUp != 0 && a.RawFlags&unix.IFF_LOWER_UP != 0
}

// Close stops delivery and closes the socket.
func (p *Port) Close() error {
	p.mu.Lock()
	select {
	case <-p.done:
		p.mu.Unlock()
		return nil
	default:
	}
	close(p.done)
	p.mu.Unlock()
	err := p.sock.Close()
	p.wg.Wait()
	return err
}
