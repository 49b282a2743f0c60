package softswitch

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/openflow"
)

// testPKI writes a CA and leaf certificates signed by it.
type testPKI struct {
	dir    string
	ca     *x509.Certificate
	caKey  *ecdsa.PrivateKey
	caFile string
	serial int64
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(der)
	p := &testPKI{dir: t.TempDir(), ca: ca, caKey: key, serial: 1}
	p.caFile = p.write(t, "ca.pem", "CERTIFICATE", der)
	return p
}

func (p *testPKI) write(t *testing.T, name, typ string, der []byte) string {
	t.Helper()
	f := filepath.Join(p.dir, name)
	if err := os.WriteFile(f, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// issue returns a TLSConfig with a fresh leaf certificate for name.
func (p *testPKI) issue(t *testing.T, name string) *openflow.TLSConfig {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p.serial++
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(p.serial), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return &openflow.TLSConfig{
		CertFile: p.write(t, name+".pem", "CERTIFICATE", der),
		KeyFile:  p.write(t, name+"-key.pem", "EC PRIVATE KEY", kder),
		CAFile:   p.caFile,
	}
}

func TestTLSControllerAndManagementListener(t *testing.T) {
	pki := newTestPKI(t)
	ctlTLS, swTLS, clientTLS := pki.issue(t, "controller"), pki.issue(t, "switch"), pki.issue(t, "ofctl")

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
	other := newTestPKI(t).issue(t, "stranger")
	bad, err := openflow.Dial(ctx, "ssl:"+sess.ListenAddrs()[0].String(), &openflow.TLSConfig{CertFile: other.CertFile, KeyFile: other.KeyFile, CAFile: pki.caFile})
	if err == nil {
		bc := openflow.NewConn(bad, openflow.ConnConfig{HandshakeTimeout: 2 * time.Second})
		if err := bc.Handshake(ctx); err == nil {
			t.Fatal("a client with a foreign certificate completed the OpenFlow handshake")
		}
		bc.Close()
	}
}
