package softswitch

import (
	"context"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/internal/testpki"
	"github.com/pseudocong/pseudocong/openflow"
)

// tlsFor issues a certificate for name from ca: the TLSConfig of a peer
// that trusts ca.
func tlsFor(t *testing.T, ca *testpki.CA, name string) *openflow.TLSConfig {
	t.Helper()
	p := ca.Issue(t, name)
	return &openflow.TLSConfig{CertFile: p.CertFile, KeyFile: p.KeyFile, CAFile: ca.CertFile}
}

func TestTLSControllerAndManagementListener(t *testing.T) {
	pki := testpki.NewCA(t, "test CA")
	ctlTLS, swTLS, clientTLS := tlsFor(t, pki, "controller"), tlsFor(t, pki, "switch"), tlsFor(t, pki, "ofctl")

	// A controller on pssl: with mutual authentication.
	ln, err := openflow.Listen("pssl:0:127.0.0.1", ctlTLS)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, sess := startSession(t, SessionConfig{Controller: "ssl:" + ln.Addr().String(), Listen: []string{"pssl:0:127.0.0.1"}, TLS: swTLS}, 2)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	ctl := openflow.NewConn(nc, openflow.ConnConfig{})
	defer ctl.Close()
	if err := ctl.Handshake(ctx); err != nil {
		t.Fatal(err)
	}
	rep, err := ctl.Request(ctx, &openflow.FeaturesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if fr := rep.(*openflow.FeaturesReply); fr.DatapathID != 0x77 {
		t.Fatalf("features over TLS: %+v", fr)
	}

	// A management client on the switch's pssl: listener.
	mnc, err := openflow.Dial(ctx, "ssl:"+sess.ListenAddrs()[0].String(), clientTLS)
	if err != nil {
		t.Fatal(err)
	}
	mc := openflow.NewConn(mnc, openflow.ConnConfig{})
	defer mc.Close()
	if err := mc.Handshake(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := mc.Echo(ctx); err != nil {
		t.Fatal(err)
	}

	// A client whose certificate is not from the CA is refused (it trusts
	// the switch, so the refusal is the switch's).
	other := testpki.NewCA(t, "test CA").Issue(t, "stranger") // another CA of the same name
	bad, err := openflow.Dial(ctx, "ssl:"+sess.ListenAddrs()[0].String(), &openflow.TLSConfig{CertFile: other.CertFile, KeyFile: other.KeyFile, CAFile: pki.CertFile})
	if err == nil {
		bc := openflow.NewConn(bad, openflow.ConnConfig{HandshakeTimeout: 2 * time.Second})
		if err := bc.Handshake(ctx); err == nil {
			t.Fatal("a client with a foreign certificate completed the OpenFlow handshake")
		}
		bc.Close()
	}
}
