package openflow

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
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
		ca, err := loadCA(c.CAFile)
		if err != nil {
			return nil, fmt.Errorf("openflow: tls server: %w", err)
		}
		// Require a certificate but verify it ourselves, rather than
		// RequireAndVerifyClientCert with ClientCAs: with ClientCAs set the
		// server announces the CA's name, and a Go client whose certificate
		// is from another CA then sends none at all, so the rejection was
		// logged as "client didn't provide a certificate". Without the
		// announcement every client sends what it has, and the error names
		// the certificate and why it is refused.
		cfg.ClientAuth = tls.RequireAnyClientCert
		cfg.VerifyConnection = func(cs tls.ConnectionState) error {
			return ca.verify("client", cs.PeerCertificates)
		}
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
		// Always present the certificate, as OpenSSL (Open vSwitch) does.
		// crypto/tls would send none when it is not from a CA the server
		// names, and the server could only report a missing certificate
		// instead of the wrong one.
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &cert, nil }
	}
	if c.CAFile != "" {
		ca, err := loadCA(c.CAFile)
		if err != nil {
			return nil, fmt.Errorf("openflow: tls client: %w", err)
		}
		// Verify the chain against the CA ourselves, without the host name
		// check that InsecureSkipVerify turns off (see TLSConfig).
		cfg.InsecureSkipVerify = true
		cfg.VerifyConnection = func(cs tls.ConnectionState) error {
			return ca.verify("server", cs.PeerCertificates)
		}
	}
	return cfg, nil
}

// caFile is a loaded CA file: the pool to verify against and, for error
// messages, where it came from and whom it holds.
type caFile struct {
	path  string
	pool  *x509.CertPool
	names []string // subjects of the CA certificates
}

func loadCA(file string) (*caFile, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read CA file: %w", err)
	}
	ca := &caFile{path: file, pool: x509.NewCertPool()}
	for rest := data; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			continue // as CertPool.AppendCertsFromPEM: skip what does not parse
		}
		ca.pool.AddCert(cert)
		ca.names = append(ca.names, cert.Subject.String())
	}
	if len(ca.names) == 0 {
		return nil, fmt.Errorf("CA file %s: no PEM certificate found", file)
	}
	return ca, nil
}

// verify checks that the leaf of certs, presented by the peer (role
// "client" or "server"), chains up to the CA, using the other certs as
// intermediates. The error names the certificate, its issuer and the
// reason, so that a certificate from the wrong CA is not mistaken for a
// missing one.
func (ca *caFile) verify(role string, certs []*x509.Certificate) error {
	if len(certs) == 0 {
		return fmt.Errorf("openflow: tls: %s presented no certificate; one signed by %s (CA file %s) is required",
			role, ca.describe(), ca.path)
	}
	inter := x509.NewCertPool()
	for _, c := range certs[1:] {
		inter.AddCert(c)
	}
	leaf := certs[0]
	_, err := leaf.Verify(x509.VerifyOptions{
		Roots:         ca.pool,
		Intermediates: inter,
		// Key usage is not enforced: certificates from ovs-pki and ad-hoc CAs vary.
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny},
	})
	if err == nil {
		return nil
	}
	what := fmt.Sprintf("%s certificate %q (issuer %q", role, leaf.Subject.String(), leaf.Issuer.String())
	if bytes.Equal(leaf.RawSubject, leaf.RawIssuer) {
		what += ", self-signed"
	}
	what += ")"
	var unknown x509.UnknownAuthorityError
	if errors.As(err, &unknown) {
		return fmt.Errorf("openflow: tls: %s is not signed by the configured CA %s (CA file %s): %w",
			what, ca.describe(), ca.path, err)
	}
	return fmt.Errorf("openflow: tls: %s rejected: %w", what, err)
}

// describe names the CA certificates, a few at most.
func (ca *caFile) describe() string {
	const show = 3
	quoted := make([]string, 0, show)
	for _, n := range ca.names[:min(len(ca.names), show)] {
		quoted = append(quoted, strconv.Quote(n))
	}
	s := strings.Join(quoted, ", ")
	if len(ca.names) > show {
		s += fmt.Sprintf(" and %d more", len(ca.names)-show)
	}
	return s
}
