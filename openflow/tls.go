package openflow

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
)

// TLSConfig names the PEM files for ssl: and pssl: targets, like Open
// vSwitch's --private-key, --certificate and --ca-cert.
//
// With CAFile set, authentication is mutual, as in Open vSwitch: a server
// (pssl:) requires every client to present a certificate signed by the CA,
// and a client (ssl:) accepts only a server certificate signed by the CA.
// As in Open vSwitch, the peer's certificate chain is checked but its host
// name is not: switches and controllers are usually addressed by IP and
// their certificates rarely carry IP SANs.
//
// Without CAFile, a server accepts any client (no client certificate is
// requested) and a client verifies the server against the system roots,
// host name included.
type TLSConfig struct {
	CertFile string // PEM certificate (chain) presented to the peer
	KeyFile  string // PEM private key for CertFile
	CAFile   string // PEM CA certificate(s) that peers must be signed by
}

// ServerConfig builds the crypto/tls configuration for a pssl: listener. A
// certificate and key are mandatory.
func (c *TLSConfig) ServerConfig() (*tls.Config, error) {
	if c == nil || c.CertFile == "" || c.KeyFile == "" {
		return nil, errors.New("openflow: tls server: certificate and private key files are required")
	}
	cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("openflow: tls server: load key pair %s / %s: %w", c.CertFile, c.KeyFile, err)
	}
	cfg := &tls.Config{
		Certificates: []tls.Certificate{cert},
		MinVersion:   tls.VersionTLS12,
	}
	if c.CAFile != "" {
		pool, err := loadCAPool(c.CAFile)
		if err != nil {
			return nil, fmt.Errorf("openflow: tls server: %w", err)
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}

// ClientConfig builds the crypto/tls configuration for an ssl: connection to
// serverName (used for SNI and, without a CA file, for host name checks).
// The certificate is optional for a client, but a server with a CA will
// reject a client without one.
func (c *TLSConfig) ClientConfig(serverName string) (*tls.Config, error) {
	cfg := &tls.Config{ServerName: serverName, MinVersion: tls.VersionTLS12}
	if c == nil {
		return cfg, nil
	}
	if (c.CertFile == "") != (c.KeyFile == "") {
		return nil, errors.New("openflow: tls client: certificate and private key must be given together")
	}
	if c.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("openflow: tls client: load key pair %s / %s: %w", c.CertFile, c.KeyFile, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	if c.CAFile != "" {
		pool, err := loadCAPool(c.CAFile)
		if err != nil {
			return nil, fmt.Errorf("openflow: tls client: %w", err)
		}
		// Verify the chain against the CA ourselves, without the host name
		// check that InsecureSkipVerify turns off (see TLSConfig).
		cfg.InsecureSkipVerify = true
		cfg.VerifyConnection = func(cs tls.ConnectionState) error {
			return verifyChain(cs.PeerCertificates, pool)
		}
	}
	return cfg, nil
}

// verifyChain checks that the leaf of certs chains up to a root in pool,
// using the other certs as intermediates.
func verifyChain(certs []*x509.Certificate, pool *x509.CertPool) error {
	if len(certs) == 0 {
		return errors.New("openflow: tls: peer presented no certificate")
	}
	inter := x509.NewCertPool()
	for _, c := range certs[1:] {
		inter.AddCert(c)
	}
	_, err := certs[0].Verify(x509.VerifyOptions{
		Roots:         pool,
		Intermediates: inter,
		// Key usage is not enforced: certificates from ovs-pki and ad-hoc CAs vary.
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny},
	})
	if err != nil {
		return fmt.Errorf("openflow: tls: peer certificate %q: %w", certs[0].Subject.CommonName, err)
	}
	return nil
}

func loadCAPool(file string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read CA file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("CA file %s: no PEM certificate found", file)
	}
	return pool, nil
}
