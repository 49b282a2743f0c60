package openflow

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testPKI writes PEM files for a CA and certificates it signs.
type testPKI struct {
	dir    string
	caCert *x509.Certificate
	caKey  *ecdsa.PrivateKey
	serial int64
}

func newTestPKI(t *testing.T, name string) *testPKI {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	p := &testPKI{dir: t.TempDir(), caCert: cert, caKey: key, serial: 1}
	writePEM(t, p.path("ca.pem"), "CERTIFICATE", der)
	return p
}

func (p *testPKI) path(f string) string { return filepath.Join(p.dir, f) }

// issue creates name-cert.pem and name-key.pem signed by the CA; like
// ovs-pki certificates they carry no IP SAN.
func (p *testPKI) issue(t *testing.T, name string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p.serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(p.serial),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.caCert, &key.PublicKey, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = p.path(name+"-cert.pem"), p.path(name+"-key.pem")
	writePEM(t, certFile, "CERTIFICATE", der)
	writePEM(t, keyFile, "EC PRIVATE KEY", kder)
	return certFile, keyFile
}

func writePEM(t *testing.T, file, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestTLSMutualAuth(t *testing.T) {
	pki := newTestPKI(t, "test CA")
	srvCert, srvKey := pki.issue(t, "controller")
	cliCert, cliKey := pki.issue(t, "switch")
	other := newTestPKI(t, "other CA")
	strangerCert, strangerKey := other.issue(t, "stranger")
	fakeSrvCert, fakeSrvKey := other.issue(t, "impostor")

	serverCfg := &TLSConfig{CertFile: srvCert, KeyFile: srvKey, CAFile: pki.path("ca.pem")}
	tests := []struct {
		name    string
		server  *TLSConfig
		client  *TLSConfig
		wantErr bool
	}{
		{"mutual auth", serverCfg, &TLSConfig{CertFile: cliCert, KeyFile: cliKey, CAFile: pki.path("ca.pem")}, false},
		{"client without certificate", serverCfg, &TLSConfig{CAFile: pki.path("ca.pem")}, true},
		{"client signed by another CA", serverCfg, &TLSConfig{CertFile: strangerCert, KeyFile: strangerKey, CAFile: pki.path("ca.pem")}, true},
		{"server signed by another CA", &TLSConfig{CertFile: fakeSrvCert, KeyFile: fakeSrvKey, CAFile: pki.path("ca.pem")},
			&TLSConfig{CertFile: cliCert, KeyFile: cliKey, CAFile: pki.path("ca.pem")}, true},
		{"no CA: server does not ask for a client certificate", &TLSConfig{CertFile: srvCert, KeyFile: srvKey},
			&TLSConfig{CAFile: pki.path("ca.pem")}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cliErr, sErr := tlsExchange(t, tc.server, tc.client)
			if tc.wantErr {
				if cliErr == nil || sErr == nil {
					t.Fatalf("connection should fail on both ends: client %v, server %v", cliErr, sErr)
				}
				t.Logf("client: %v; server: %v", cliErr, sErr)
				if errors.Is(sErr, context.DeadlineExceeded) {
					t.Fatalf("server noticed only by timeout: %v", sErr)
				}
				return
			}
			if cliErr != nil || sErr != nil {
				t.Fatalf("client %v, server %v", cliErr, sErr)
			}
		})
	}
}

// tlsExchange runs one pssl listener with server and one ssl client with
// client through the OpenFlow handshake and an echo, and returns each
// side's error.
func tlsExchange(t *testing.T, server, client *TLSConfig) (cliErr, srvErr error) {
	t.Helper()
	l, err := Listen("pssl:0:127.0.0.1", server)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// Generous: a TLS handshake on a busy 2-core machine; a failure must be
	// reported by the peers, never by this timeout (checked by the callers).
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srvErrc := make(chan error, 1)
	clientDone := make(chan struct{})
	go func() {
		nc, err := l.Accept()
		if err != nil {
			srvErrc <- err
			return
		}
		c := NewConn(nc, quietConfig())
		err = c.Handshake(ctx)
		if err == nil {
			_, err = c.Echo(ctx)
		}
		srvErrc <- err
		select { // keep answering until the client is done
		case <-clientDone:
		case <-c.Done():
		}
		c.Close()
	}()
	nc, err := Dial(ctx, "ssl:"+l.Addr().String(), client)
	if err != nil {
		cliErr = err
	} else {
		c := NewConn(nc, quietConfig())
		cliErr = c.Handshake(ctx)
		if cliErr == nil {
			_, cliErr = c.Echo(ctx)
		}
		defer c.Close()
	}
	close(clientDone)
	return cliErr, <-srvErrc
}

// selfSigned writes a self-signed leaf certificate (not a CA) and its key.
func selfSigned(t *testing.T, name string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(7),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, name+"-cert.pem"), filepath.Join(dir, name+"-key.pem")
	writePEM(t, certFile, "CERTIFICATE", der)
	writePEM(t, keyFile, "EC PRIVATE KEY", kder)
	return certFile, keyFile
}

// TestTLSRejectionSaysWhy: a certificate from another CA, or a self-signed
// one, is reported as such, with its subject, its issuer and the
// verification error, on whichever side rejects it; it used to be logged by
// the controller as "client didn't provide a certificate" (the Go client
// withheld a certificate that did not match the server's CA list, and the
// server verified nothing itself). A client without any certificate still
// gets, and causes, a message that says so.
func TestTLSRejectionSaysWhy(t *testing.T) {
	pki := newTestPKI(t, "test CA")
	ca := pki.path("ca.pem")
	srvCert, srvKey := pki.issue(t, "controller")
	cliCert, cliKey := pki.issue(t, "switch")
	other := newTestPKI(t, "other CA")
	strangerCert, strangerKey := other.issue(t, "stranger")
	impostorCert, impostorKey := other.issue(t, "impostor")
	loneCert, loneKey := selfSigned(t, "lonely switch")
	serverCfg := &TLSConfig{CertFile: srvCert, KeyFile: srvKey, CAFile: ca}

	tests := []struct {
		name           string
		server, client *TLSConfig
		rejecter       string   // "server" or "client": whose error names the cause
		mention        []string // in the rejecter's error
		peerMention    string   // in the other side's error
	}{
		{"client signed by another CA", serverCfg, &TLSConfig{CertFile: strangerCert, KeyFile: strangerKey, CAFile: ca},
			"server", []string{`"CN=stranger"`, `issuer "CN=other CA"`, "not signed by the configured CA", "CN=test CA", "unknown authority"}, "bad certificate"},
		{"self-signed client", serverCfg, &TLSConfig{CertFile: loneCert, KeyFile: loneKey, CAFile: ca},
			"server", []string{`"CN=lonely switch"`, "self-signed", "not signed by the configured CA", "unknown authority"}, "bad certificate"},
		{"client without certificate", serverCfg, &TLSConfig{CAFile: ca},
			"server", []string{"didn't provide a certificate"}, "certificate required"},
		{"server signed by another CA", &TLSConfig{CertFile: impostorCert, KeyFile: impostorKey, CAFile: ca},
			&TLSConfig{CertFile: cliCert, KeyFile: cliKey, CAFile: ca},
			"client", []string{`server certificate "CN=impostor"`, `issuer "CN=other CA"`, "not signed by the configured CA", "unknown authority"}, "bad certificate"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cliErr, srvErr := tlsExchange(t, tc.server, tc.client)
			if cliErr == nil || srvErr == nil {
				t.Fatalf("connection should fail on both ends: client %v, server %v", cliErr, srvErr)
			}
			t.Logf("client: %v\nserver: %v", cliErr, srvErr)
			rejErr, peerErr := srvErr, cliErr
			if tc.rejecter == "client" {
				rejErr, peerErr = cliErr, srvErr
			}
			for _, want := range tc.mention {
				if !strings.Contains(rejErr.Error(), want) {
					t.Errorf("%s error %q does not mention %q", tc.rejecter, rejErr, want)
				}
			}
			if strings.Contains(srvErr.Error(), "didn't provide a certificate") && tc.client.CertFile != "" {
				t.Errorf("server says the client provided no certificate, but it has one: %v", srvErr)
			}
			if !strings.Contains(peerErr.Error(), tc.peerMention) {
				t.Errorf("peer error %q does not mention %q", peerErr, tc.peerMention)
			}
		})
	}
}

func TestTLSConfigErrors(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "junk.pem")
	if err := os.WriteFile(notPEM, []byte("junk"), 0o600); err != nil {
		t.Fatal(err)
	}
	pki := newTestPKI(t, "ca")
	cert, key := pki.issue(t, "x")
	tests := []struct {
		name    string
		run     func() error
		mention string
	}{
		{"server without key pair", func() error { _, err := (&TLSConfig{CAFile: notPEM}).ServerConfig(); return err }, "required"},
		{"server missing files", func() error {
			_, err := (&TLSConfig{CertFile: dir + "/nope", KeyFile: dir + "/nope"}).ServerConfig()
			return err
		}, "load key pair"},
		{"server CA not PEM", func() error {
			_, err := (&TLSConfig{CertFile: cert, KeyFile: key, CAFile: notPEM}).ServerConfig()
			return err
		}, "no PEM certificate"},
		{"client cert without key", func() error { _, err := (&TLSConfig{CertFile: cert}).ClientConfig("h"); return err }, "together"},
		{"client CA missing", func() error { _, err := (&TLSConfig{CAFile: dir + "/nope"}).ClientConfig("h"); return err }, "read CA file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run()
			if err == nil || !strings.Contains(err.Error(), tc.mention) {
				t.Fatalf("got %v, want an error mentioning %q", err, tc.mention)
			}
		})
	}
}
