package testpki

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"os"
	"testing"
)

// A CA's certificates verify against it for server and client use; one
// from another CA, or self-signed, does not; every pair loads as a TLS
// key pair.
func TestChains(t *testing.T) {
	ca, other := NewCA(t, "test CA"), NewCA(t, "other CA")
	good, again := ca.Issue(t, "switch"), ca.Issue(t, "switch")
	if good.CertFile == again.CertFile {
		t.Fatal("two certificates for one name share a file")
	}
	pemCA, err := os.ReadFile(ca.CertFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pemCA) {
		t.Fatal("CA file holds no PEM certificate")
	}
	leaf := func(p Pair) *x509.Certificate {
		t.Helper()
		kp, err := tls.LoadX509KeyPair(p.CertFile, p.KeyFile)
		if err != nil {
			t.Fatal(err)
		}
		c, err := x509.ParseCertificate(kp.Certificate[0])
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for _, usage := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
		opts := x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{usage}}
		if _, err := leaf(good).Verify(opts); err != nil {
			t.Errorf("CA-signed, usage %v: %v", usage, err)
		}
		var ua x509.UnknownAuthorityError
		for _, bad := range []Pair{other.Issue(t, "stranger"), SelfSigned(t, "lonely")} {
			if _, err := leaf(bad).Verify(opts); !errors.As(err, &ua) {
				t.Errorf("%s verified against the wrong CA: %v", bad.CertFile, err)
			}
		}
	}
	if c := leaf(good); c.Subject.CommonName != "switch" || c.Issuer.CommonName != "test CA" || len(c.IPAddresses)+len(c.DNSNames) != 0 {
		t.Errorf("leaf %v issued by %v, SANs %v %v", c.Subject, c.Issuer, c.IPAddresses, c.DNSNames)
	}
	if c := leaf(SelfSigned(t, "lonely")); c.Issuer.CommonName != "lonely" {
		t.Errorf("self-signed issuer %v", c.Issuer)
	}
}
