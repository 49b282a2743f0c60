//go:build integration

package live

import (
	"context"
	"errors"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/vishvananda/netlink"

	"github.com/pseudocong/pseudocong/internal/testenv"
	"github.com/pseudocong/pseudocong/probes"
	"github.com/pseudocong/pseudocong/testbed"
)

// directPair joins two fresh namespaces by one veth pair (no switch):
// eth0 = 10.0.0.1/24 in a, 10.0.0.2/24 in b. Cleanup deletes both
// namespaces, which destroys the pair.
func directPair(t *testing.T) (a, b *testenv.Netns) {
	t.Helper()
	testenv.RequireRoot(t)
	a, b = testenv.NewNetns(t, "pa"), testenv.NewNetns(t, "pb")
	tag := testenv.NewTag()
	la, lb := tag+"x", tag+"y"
	if err := netlink.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: la}, PeerName: lb}); err != nil {
		t.Fatalf("veth: %v", err)
	}
	t.Cleanup(func() {
		if l, err := netlink.LinkByName(la); err == nil {
			_ = netlink.LinkDel(l)
		}
	})
	for _, end := range []struct {
		link, addr string
		ns         *testenv.Netns
	}{{la, "10.0.0.1/24", a}, {lb, "10.0.0.2/24", b}} {
		l, err := netlink.LinkByName(end.link)
		if err != nil {
			t.Fatal(err)
		}
		h, err := end.ns.Handle()
		if err != nil {
			t.Fatal(err)
		}
		if err := netlink.LinkSetNsFd(l, int(h)); err != nil {
			t.Fatalf("move %s: %v", end.link, err)
		}
		nl, err := netlink.NewHandleAt(h)
		if err != nil {
			t.Fatal(err)
		}
		l, err = nl.LinkByName(end.link)
		if err == nil {
			err = nl.LinkSetName(l, "eth0")
		}
		if err == nil {
			l, err = nl.LinkByName("eth0")
		}
		if err == nil {
			addr, _ := netlink.ParseAddr(end.addr)
			err = nl.AddrAdd(l, addr)
		}
		if err == nil {
			err = nl.LinkSetUp(l)
		}
		if err == nil {
			err = testbed.Do(end.ns.Name, func() error { return testbed.SetTxChecksum("eth0", false) })
		}
		nl.Close()
		h.Close()
		if err != nil {
			t.Fatalf("configure %s in %s: %v", end.link, end.ns.Name, err)
		}
	}
	for _, ns := range []*testenv.Netns{a, b} {
		if err := testbed.WaitOperUp(ns.Name, "eth0", 5*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	return a, b
}

func startResponder(t *testing.T, ns string, pcap string) (stop func() *ResponderReport) {
	t.Helper()
	c, err := CreateCapture(pcap)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	type out struct {
		rep *ResponderReport
		err error
	}
	done := make(chan out, 1)
	go func() {
		rep, err := RunResponder(ctx, ResponderConfig{Netns: ns, Iface: "eth0", Capture: c, Ready: ready})
		done <- out{rep, err}
	}()
	select {
	case <-ready:
	case o := <-done:
		t.Fatalf("responder: %v", o.err)
	case <-time.After(5 * time.Second):
		t.Fatal("responder not ready")
	}
	var rep *ResponderReport
	stopped := false
	stop = func() *ResponderReport {
		if !stopped {
			stopped = true
			cancel()
			o := <-done
			if o.err != nil {
				t.Errorf("responder: %v", o.err)
			}
			rep = o.rep
			if err := c.Close(); err != nil {
				t.Errorf("capture: %v", err)
			}
		}
		return rep
	}
	t.Cleanup(func() { stop() })
	return stop
}

// pcapFrames reads a capture and counts frames, TCP RSTs and the frames
// carrying a TCP segment.
func pcapFrames(t *testing.T, path string) (frames, tcp, rst int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		t.Fatalf("pcap %s: %v", path, err)
	}
	if r.LinkType() != layers.LinkTypeEthernet {
		t.Errorf("link type %v", r.LinkType())
	}
	for {
		data, _, err := r.ReadPacketData()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("pcap %s: %v", path, err)
		}
		frames++
		d := DecodeFrame(data)
		if d.Kind == FrameProbe {
			tcp++
		}
		// RSTs decode as FrameOther; look at the flag directly.
		if len(data) > 14+20+13 && data[12] == 0x08 && data[13] == 0x00 && data[14+9] == 6 {
			ihl := int(data[14]&0x0f) * 4
			if data[14+ihl+13]&0x04 != 0 {
				rst++
			}
		}
	}
}

func TestRawProbesOverDirectVeth(t *testing.T) {
	a, b := directPair(t)
	dir := t.TempDir()
	for _, kind := range []probes.Kind{probes.KindSYN, probes.KindData} {
		t.Run(kind.String(), func(t *testing.T) {
			respPcap := filepath.Join(dir, kind.String()+"-responder.pcap")
			probePcap := filepath.Join(dir, kind.String()+"-prober.pcap")
			stop := startResponder(t, b.Name, respPcap)
			c, err := CreateCapture(probePcap)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			const n = 50
			rep, results, err := RunProbe(ctx, ProbeConfig{
				Kind: kind, Netns: a.Name, Iface: "eth0", Count: n, Rate: 500,
				Timeout: 3 * time.Second, Capture: c, Profile: probes.Berkeley(),
			})
			if cerr := c.Close(); cerr != nil {
				t.Errorf("capture: %v", cerr)
			}
			if err != nil {
				t.Fatalf("probe: %v", err)
			}
			resp := stop()
			if !rep.Complete || rep.Summary.Answered != n || rep.Stats.Stray != 0 {
				t.Fatalf("report: %+v stats %+v", rep.Summary, rep.Stats)
			}
			for _, r := range results {
				if r.RTT <= 0 || r.RTT > 500*time.Millisecond {
					t.Errorf("probe %d: RTT %v over a direct veth", r.Index, r.RTT)
				}
			}
			if rep.Bins[0].Count != n {
				t.Errorf("bins %+v: every RTT belongs in the first", rep.Bins)
			}
			wantResp := probes.ResponderStats{SYNs: n}
			if kind == probes.KindData {
				wantResp = probes.ResponderStats{Data: n}
			}
			if resp.Responder != wantResp {
				t.Errorf("responder stats %+v, want %+v", resp.Responder, wantResp)
			}
			t.Logf("%s: %d probes, RTT min %.1f µs median %.1f µs p99 %.1f µs max %.1f µs",
				kind, n, rep.Summary.MinS*1e6, rep.Summary.MedianS*1e6, rep.Summary.P99S*1e6, rep.Summary.MaxS*1e6)

			// Both captures hold the n requests and n replies; neither
			// host kernel sent a RST (the probe addresses are not theirs).
			for _, p := range []string{probePcap, respPcap} {
				frames, tcp, rst := pcapFrames(t, p)
				if tcp != 2*n || rst != 0 || frames < 2*n {
					t.Errorf("%s: %d frames, %d probe segments (want %d), %d RSTs (want 0)", filepath.Base(p), frames, tcp, 2*n, rst)
				}
			}
		})
	}
}

func TestTCPProbeOverDirectVeth(t *testing.T) {
	a, b := directPair(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ready := make(chan netip.AddrPort, 1)
	lnDone := make(chan int, 1)
	reg := prometheus.NewRegistry()
	go func() {
		n, err := ListenTCP(ctx, TCPListenConfig{Netns: b.Name, Addr: netip.MustParseAddrPort("10.0.0.2:0"), Ready: ready, Registerer: reg})
		if err != nil {
			t.Errorf("listen: %v", err)
		}
		lnDone <- n
	}()
	var addr netip.AddrPort
	select {
	case addr = <-ready:
	case <-time.After(5 * time.Second):
		t.Fatal("listener not ready")
	}
	const n = 20
	rep, results, err := RunTCPProbe(ctx, TCPProbeConfig{Netns: a.Name, Dst: addr, Count: n, Rate: 200, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if !r.Connected || r.Retransmits != 0 || r.Handshake <= 0 || r.Handshake > time.Second {
			t.Errorf("connect %d: %+v", r.Index, r)
		}
	}
	if rep.Summary.Answered != n || *rep.ProfileMismatches != 0 || rep.Bins[0].Count != n {
		t.Errorf("report %+v bins %+v mismatches %d", rep.Summary, rep.Bins, *rep.ProfileMismatches)
	}
	t.Logf("tcp: %d connects, handshake median %.1f µs max %.1f µs", n, rep.Summary.MedianS*1e6, rep.Summary.MaxS*1e6)
	// connect() returns once the handshake is done, possibly before the
	// listener has accepted: wait for its counter, then stop it.
	deadline := time.Now().Add(5 * time.Second)
	for acceptedTotal(t, reg) < n && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if got := <-lnDone; got != n {
		t.Errorf("listener accepted %d, want %d", got, n)
	}

	// A connect to a closed port fails (RST), and is reported as such.
	_, res, err := RunTCPProbe(context.Background(), TCPProbeConfig{Netns: a.Name, Dst: netip.MustParseAddrPort("10.0.0.2:9"), Count: 1, Rate: 1, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Connected || !errors.Is(res[0].Err, unixECONNREFUSED) {
		t.Errorf("closed port: %+v", res[0])
	}
}

// acceptedTotal reads pseudocong_probe_listener_accepted_total.
func acceptedTotal(t *testing.T, reg *prometheus.Registry) int {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == "pseudocong_probe_listener_accepted_total" {
			return int(f.GetMetric()[0].GetCounter().GetValue())
		}
	}
	t.Fatal("pseudocong_probe_listener_accepted_total not registered")
	return 0
}

// With Exchange, every connection sends its bytes after the handshake and
// reads them back from an echoing listener; against a listener that closes
// at once the exchange is reported as failed, the connect still as done.
func TestTCPProbeExchangeOverDirectVeth(t *testing.T) {
	a, b := directPair(t)
	for _, echo := range []bool{true, false} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		ready := make(chan netip.AddrPort, 1)
		lnDone := make(chan error, 1)
		go func() {
			_, err := ListenTCP(ctx, TCPListenConfig{Netns: b.Name, Addr: netip.MustParseAddrPort("10.0.0.2:0"), Ready: ready, Echo: echo})
			lnDone <- err
		}()
		var addr netip.AddrPort
		select {
		case addr = <-ready:
		case err := <-lnDone:
			t.Fatalf("listener: %v", err)
		}
		const n, size = 10, 64 << 10
		_, results, err := RunTCPProbe(ctx, TCPProbeConfig{Netns: a.Name, Dst: addr, Count: n, Rate: 200, Timeout: 10 * time.Second, Exchange: size})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range results {
			if !r.Connected {
				t.Errorf("echo %v: connect %d failed: %v", echo, r.Index, r.Err)
				continue
			}
			if echo && (!r.Exchanged || r.ExchangeErr != nil || r.ExchangeTime <= 0) {
				t.Errorf("echo: connect %d: exchanged %v, %v, in %v", r.Index, r.Exchanged, r.ExchangeErr, r.ExchangeTime)
			}
			if !echo && (r.Exchanged || r.ExchangeErr == nil) {
				t.Errorf("closing listener: connect %d: exchanged %v, error %v; want a failed exchange", r.Index, r.Exchanged, r.ExchangeErr)
			}
		}
		cancel()
		if err := <-lnDone; err != nil {
			t.Errorf("listener (echo %v): %v", echo, err)
		}
	}
}
