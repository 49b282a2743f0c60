package openflow

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/internal/testpki"
)

func TestTLSMutualAuth(t *testing.T) {
	pki := testpki.NewCA(t, "test CA")
	ca := pki.CertFile
	srv, cli := pki.Issue(t, "controller"), pki.Issue(t, "switch")
	other := testpki.NewCA(t, "other CA")
	stranger, fakeSrv := other.Issue(t, "stranger"), other.Issue(t, "impostor")

	serverCfg := &TLSConfig{CertFile: srv.CertFile, KeyFile: srv.KeyFile, CAFile: ca}
	tests := []struct {
		name    string
		server  *TLSConfig
		client  *TLSConfig
		wantErr bool
	}{
		{"mutual auth", serverCfg, &TLSConfig{CertFile: cli.CertFile, KeyFile: cli.KeyFile, CAFile: ca}, false},
		{"client without certificate", serverCfg, &TLSConfig{CAFile: ca}, true},
		{"client signed by another CA", serverCfg, &TLSConfig{CertFile: stranger.CertFile, KeyFile: stranger.KeyFile, CAFile: ca}, true},
		{"server signed by another CA", &TLSConfig{CertFile: fakeSrv.CertFile, KeyFile: fakeSrv.KeyFile, CAFile: ca},
			&TLSConfig{CertFile: cli.CertFile, KeyFile: cli.KeyFile, CAFile: ca}, true},
		{"no CA: server does not ask for a client certificate", &TLSConfig{CertFile: srv.CertFile, KeyFile: srv.KeyFile},
			&TLSConfig{CAFile: ca}, false},
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

// TestTLSRejectionSaysWhy: a certificate from another CA, or a self-signed
// one, is reported as such, with its subject, its issuer and the
// verification error, on whichever side rejects it; it used to be logged by
// the controller as "client didn't provide a certificate" (the Go client
// withheld a certificate that did not match the server's CA list, and the
// server verified nothing itself). A client without any certificate still
// gets, and causes, a message that says so.
func TestTLSRejectionSaysWhy(t *testing.T) {
	pki := testpki.NewCA(t, "test CA")
	ca := pki.CertFile
	srv, cli := pki.Issue(t, "controller"), pki.Issue(t, "switch")
	other := testpki.NewCA(t, "other CA")
	stranger, impostor := other.Issue(t, "stranger"), other.Issue(t, "impostor")
	lone := testpki.SelfSigned(t, "lonely switch")
	serverCfg := &TLSConfig{CertFile: srv.CertFile, KeyFile: srv.KeyFile, CAFile: ca}

	tests := []struct {
		name           string
		server, client *TLSConfig
		rejecter       string   // "server" or "client": whose error names the cause
		mention        []string // in the rejecter's error
		peerMention    string   // in the other side's error
	}{
		{"client signed by another CA", serverCfg, &TLSConfig{CertFile: stranger.CertFile, KeyFile: stranger.KeyFile, CAFile: ca},
			"server", []string{`"CN=stranger"`, `issuer "CN=other CA"`, "not signed by the configured CA", "CN=test CA", "unknown authority"}, "bad certificate"},
		{"self-signed client", serverCfg, &TLSConfig{CertFile: lone.CertFile, KeyFile: lone.KeyFile, CAFile: ca},
			"server", []string{`"CN=lonely switch"`, "self-signed", "not signed by the configured CA", "unknown authority"}, "bad certificate"},
		{"client without certificate", serverCfg, &TLSConfig{CAFile: ca},
			"server", []string{"didn't provide a certificate"}, "certificate required"},
		{"server signed by another CA", &TLSConfig{CertFile: impostor.CertFile, KeyFile: impostor.KeyFile, CAFile: ca},
			&TLSConfig{CertFile: cli.CertFile, KeyFile: cli.KeyFile, CAFile: ca},
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
	x := testpki.NewCA(t, "ca").Issue(t, "x")
	cert, key := x.CertFile, x.KeyFile
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
