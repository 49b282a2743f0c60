package controller

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"log/slog"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/openflow"
)

// testCert is a certificate and key written as PEM files, able to sign
// others when it is a CA.
type testCert struct {
	cert              *x509.Certificate
	key               *ecdsa.PrivateKey
	certFile, keyFile string
}

// newTestCert creates a certificate for cn, signed by parent (nil:
// self-signed), a CA if isCA.
func newTestCert(t *testing.T, cn string, parent *testCert, isCA bool) *testCert {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	if isCA {
		tmpl.IsCA, tmpl.BasicConstraintsValid, tmpl.KeyUsage = true, true, x509.KeyUsageCertSign
	}
	signer, signerKey := tmpl, key
	if parent != nil {
		signer, signerKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signerKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	c := &testCert{cert: cert, key: key, certFile: filepath.Join(dir, "cert.pem"), keyFile: filepath.Join(dir, "key.pem")}
	for file, block := range map[string]*pem.Block{
		c.certFile: {Type: "CERTIFICATE", Bytes: der}, c.keyFile: {Type: "EC PRIVATE KEY", Bytes: kder},
	} {
		if err := os.WriteFile(file, pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// TestServerTLSLogsWhyACertificateIsRefused: a switch whose certificate is
// from another CA, or self-signed, is logged by the controller with that
// reason (subject, issuer, verify error), not as a switch that provided no
// certificate; one without a certificate is logged as such; a switch with
// a good certificate connects.
func TestServerTLSLogsWhyACertificateIsRefused(t *testing.T) {
	ca := newTestCert(t, "pseudocong CA", nil, true)
	ctlCert := newTestCert(t, "controller", ca, false)
	good := newTestCert(t, "good switch", ca, false)
	otherCA := newTestCert(t, "other CA", nil, true)
	stranger := newTestCert(t, "stranger", otherCA, false)
	lonely := newTestCert(t, "lonely", nil, false)

	logs := newLogRecorder()
	metrics := mustMetrics(t)
	core := NewCore(Config{App: NewReactive(ReactiveConfig{}), Metrics: metrics})
	ln, err := openflow.Listen("pssl:0:127.0.0.1", &openflow.TLSConfig{CertFile: ctlCert.certFile, KeyFile: ctlCert.keyFile, CAFile: ca.certFile})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- NewServer(ServerConfig{Core: core, EchoInterval: -1, Logger: slog.New(logs)}).Serve(ctx, ln)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})

	tests := []struct {
		name   string
		cert   *testCert // nil: no certificate
		wantIn []string  // all in one "switch connection ended" record
	}{
		{"certificate from another CA", stranger,
			[]string{`client certificate "CN=stranger" (issuer "CN=other CA")`, `not signed by the configured CA "CN=pseudocong CA"`, "unknown authority"}},
		{"self-signed certificate", lonely,
			[]string{`client certificate "CN=lonely" (issuer "CN=lonely", self-signed)`, "not signed by the configured CA", "unknown authority"}},
		{"no certificate", nil, []string{"didn't provide a certificate"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &openflow.TLSConfig{CAFile: ca.certFile}
			if tc.cert != nil {
				cfg.CertFile, cfg.KeyFile = tc.cert.certFile, tc.cert.keyFile
			}
			dctx, dcancel := context.WithTimeout(context.Background(), 10*time.Second) // generous: busy machine
			defer dcancel()
			nc, err := openflow.Dial(dctx, "ssl:"+ln.Addr().String(), cfg)
			if err != nil {
				t.Fatalf("dial: %v (the client trusts the controller: it should get as far as the server's verdict)", err)
			}
			defer nc.Close()
			// The server rejects the certificate when it first writes (its
			// HELLO); the client then sees an alert instead of the HELLO.
			_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second))
			if _, err := nc.Read(make([]byte, 8)); err == nil {
				t.Fatal("the controller sent a HELLO to a switch it should refuse")
			}
			waitFor(t, "the refusal logged", func() bool {
				for _, want := range tc.wantIn {
					if logs.count(want) == 0 {
						return false
					}
				}
				return true
			})
			if tc.cert != nil && logs.count("didn't provide a certificate") != 0 {
				t.Fatalf("a switch with a certificate logged as providing none:\n%s", logs.dump())
			}
		})
	}

	t.Run("good certificate", func(t *testing.T) {
		dctx, dcancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer dcancel()
		nc, err := openflow.Dial(dctx, "ssl:"+ln.Addr().String(),
			&openflow.TLSConfig{CertFile: good.certFile, KeyFile: good.keyFile, CAFile: ca.certFile})
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		c := openflow.NewConn(nc, openflow.ConnConfig{})
		defer c.Close()
		if err := c.Handshake(dctx); err != nil {
			t.Fatalf("handshake with a good certificate: %v", err)
		}
	})
}
