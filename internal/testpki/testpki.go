// Package testpki makes the certificates TLS tests need: a CA, leaf
// certificates it signs (for a controller, a switch, a management
// client), and self-signed ones, written as PEM files into the test's
// temporary directory.
package testpki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Pair is a certificate and its private key, as PEM files.
type Pair struct{ CertFile, KeyFile string }

// CA is a certificate authority for one test.
type CA struct {
	// CertFile is the CA's certificate (PEM): what peers are told to
	// trust.
	CertFile string
	cert     *x509.Certificate
	key      *ecdsa.PrivateKey
	dir      string

	mu     sync.Mutex
	serial int64
}

// NewCA makes a CA whose subject is CN=name.
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	key := newKey(t)
	tmpl := template(name, 1)
	tmpl.IsCA, tmpl.BasicConstraintsValid, tmpl.KeyUsage, tmpl.ExtKeyUsage = true, true, x509.KeyUsageCertSign, nil
	der := create(t, tmpl, tmpl, key, key)
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	ca := &CA{cert: cert, key: key, dir: t.TempDir(), serial: 1}
	ca.CertFile = writePEM(t, filepath.Join(ca.dir, "ca.pem"), "CERTIFICATE", der)
	return ca
}

// Issue makes a leaf certificate for CN=name signed by the CA, good for
// both TLS server and client authentication. Like ovs-pki's it carries no
// subject alternative names.
func (ca *CA) Issue(t testing.TB, name string) Pair {
	t.Helper()
	ca.mu.Lock()
	ca.serial++
	serial := ca.serial
	ca.mu.Unlock()
	key := newKey(t)
	der := create(t, template(name, serial), ca.cert, key, ca.key)
	return writePair(t, ca.dir, fmt.Sprintf("%d-%s", serial, name), der, key)
}

// SelfSigned makes a leaf certificate for CN=name signed by its own key
// (not a CA: nothing it signs would verify).
func SelfSigned(t testing.TB, name string) Pair {
	t.Helper()
	key := newKey(t)
	tmpl := template(name, 7)
	der := create(t, tmpl, tmpl, key, key)
	return writePair(t, t.TempDir(), name, der, key)
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// template is a leaf valid from an hour ago to an hour from now (clock
// skew between a test's processes cannot matter).
func template(name string, serial int64) *x509.Certificate {
	return &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
}

func create(t testing.TB, tmpl, parent *x509.Certificate, key, signer *ecdsa.PrivateKey) []byte {
	t.Helper()
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

func writePair(t testing.TB, dir, base string, der []byte, key *ecdsa.PrivateKey) Pair {
	t.Helper()
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return Pair{
		CertFile: writePEM(t, filepath.Join(dir, base+"-cert.pem"), "CERTIFICATE", der),
		KeyFile:  writePEM(t, filepath.Join(dir, base+"-key.pem"), "EC PRIVATE KEY", kder),
	}
}

func writePEM(t testing.TB, file, typ string, der []byte) string {
	t.Helper()
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}
