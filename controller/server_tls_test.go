package controller

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/internal/testpki"
	"github.com/pseudocong/pseudocong/openflow"
)

// TestServerTLSLogsWhyACertificateIsRefused: a switch whose certificate is
// from another CA, or self-signed, is logged by the controller with that
// reason (subject, issuer, verify error), not as a switch that provided no
// certificate; one without a certificate is logged as such; a switch with
// a good certificate connects.
func TestServerTLSLogsWhyACertificateIsRefused(t *testing.T) {
	ca := testpki.NewCA(t, "pseudocong CA")
	ctlCert := ca.Issue(t, "controller")
	good := ca.Issue(t, "good switch")
	stranger := testpki.NewCA(t, "other CA").Issue(t, "stranger")
	lonely := testpki.SelfSigned(t, "lonely")

	logs := newLogRecorder()
	metrics := mustMetrics(t)
	core := NewCore(Config{App: NewReactive(ReactiveConfig{}), Metrics: metrics})
	ln, err := openflow.Listen("pssl:0:127.0.0.1", &openflow.TLSConfig{CertFile: ctlCert.CertFile, KeyFile: ctlCert.KeyFile, CAFile: ca.CertFile})
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
		cert   *testpki.Pair // nil: no certificate
		wantIn []string      // all in one "switch connection ended" record
	}{
		{"certificate from another CA", &stranger,
			[]string{`client certificate "CN=stranger" (issuer "CN=other CA")`, `not signed by the configured CA "CN=pseudocong CA"`, "unknown authority"}},
		{"self-signed certificate", &lonely,
			[]string{`client certificate "CN=lonely" (issuer "CN=lonely", self-signed)`, "not signed by the configured CA", "unknown authority"}},
		{"no certificate", nil, []string{"didn't provide a certificate"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &openflow.TLSConfig{CAFile: ca.CertFile}
			if tc.cert != nil {
				cfg.CertFile, cfg.KeyFile = tc.cert.CertFile, tc.cert.KeyFile
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
			&openflow.TLSConfig{CertFile: good.CertFile, KeyFile: good.KeyFile, CAFile: ca.CertFile})
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
