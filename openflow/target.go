package openflow

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// DefaultPort is the IANA OpenFlow port, used when a target names none.
const DefaultPort = 6653

// Target is a parsed Open vSwitch style connection target:
//
//	tcp:HOST[:PORT]     ssl:HOST[:PORT]     unix:PATH     (active: dial)
//	ptcp:[PORT][:HOST]  pssl:[PORT][:HOST]  punix:PATH    (passive: listen)
//
// IPv6 addresses go in brackets (tcp:[::1]:6653, ptcp:6653:[::1]). Passive
// targets put the port first, as Open vSwitch does; an omitted host means
// every address, an omitted port means 6653, and port 0 asks the kernel for
// a free port.
type Target struct {
	// Scheme is "tcp", "ssl" or "unix" (without the passive "p").
	Scheme  string
	Passive bool
	// Host is the host to dial, or the address to bind ("" = all).
	Host string
	Port int
	// Path is the socket path of unix targets.
	Path string
}

// ParseTarget parses an Open vSwitch style target string.
func ParseTarget(s string) (Target, error) {
	scheme, rest, ok := strings.Cut(s, ":")
	if !ok {
		return Target{}, fmt.Errorf("openflow: target %q: want SCHEME:ADDRESS (tcp:, ptcp:, ssl:, pssl:, unix:, punix:)", s)
	}
	t := Target{Scheme: scheme}
	if strings.HasPrefix(scheme, "p") {
		t.Passive = true
		t.Scheme = scheme[1:]
	}
	switch t.Scheme {
	case "tcp", "ssl":
	case "unix":
		if rest == "" {
			return Target{}, fmt.Errorf("openflow: target %q: empty socket path", s)
		}
		t.Path = rest
		return t, nil
	default:
		return Target{}, fmt.Errorf("openflow: target %q: unknown scheme %q (want tcp, ptcp, ssl, pssl, unix or punix)", s, scheme)
	}
	var err error
	if t.Passive {
		t.Host, t.Port, err = parsePassiveAddr(rest)
	} else {
		t.Host, t.Port, err = parseActiveAddr(rest)
	}
	if err != nil {
		return Target{}, fmt.Errorf("openflow: target %q: %w", s, err)
	}
	return t, nil
}

// parseActiveAddr parses HOST[:PORT] with HOST required.
func parseActiveAddr(s string) (string, int, error) {
	host, portStr := s, ""
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return "", 0, fmt.Errorf("unclosed '[' in %q", s)
		}
		host = s[1:end]
		switch after := s[end+1:]; {
		case after == "":
		case strings.HasPrefix(after, ":"):
			portStr = after[1:]
		default:
			return "", 0, fmt.Errorf("unexpected %q after ']'", after)
		}
	} else if h, p, ok := strings.Cut(s, ":"); ok {
		if strings.Contains(p, ":") {
			return "", 0, fmt.Errorf("IPv6 address %q must be in brackets", s)
		}
		host, portStr = h, p
	}
	if host == "" {
		return "", 0, fmt.Errorf("missing host")
	}
	port, err := parsePort(portStr, false)
	return host, port, err
}

// parsePassiveAddr parses [PORT][:HOST], the Open vSwitch order.
func parsePassiveAddr(s string) (string, int, error) {
	portStr, host, _ := strings.Cut(s, ":")
	if strings.HasPrefix(host, "[") {
		if !strings.HasSuffix(host, "]") {
			return "", 0, fmt.Errorf("unclosed '[' in %q", host)
		}
		host = host[1 : len(host)-1]
	}
	port, err := parsePort(portStr, true)
	return host, port, err
}

func parsePort(s string, allowZero bool) (int, error) {
	if s == "" {
		return DefaultPort, nil
	}
	p, err := strconv.Atoi(s)
	if err != nil || p < 0 || p > 65535 || (p == 0 && !allowZero) {
		return 0, fmt.Errorf("bad port %q", s)
	}
	return p, nil
}

// String formats t back into target syntax.
func (t Target) String() string {
	scheme := t.Scheme
	if t.Passive {
		scheme = "p" + scheme
	}
	if t.Scheme == "unix" {
		return scheme + ":" + t.Path
	}
	host := t.Host
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if t.Passive {
		if host == "" {
			return fmt.Sprintf("%s:%d", scheme, t.Port)
		}
		return fmt.Sprintf("%s:%d:%s", scheme, t.Port, host)
	}
	return fmt.Sprintf("%s:%s:%d", scheme, host, t.Port)
}

// Network and Address give the net.Dial / net.Listen arguments.
func (t Target) Network() string {
	if t.Scheme == "unix" {
		return "unix"
	}
	return "tcp"
}

// Address is HOST:PORT for TCP targets and the path for unix ones.
func (t Target) Address() string {
	if t.Scheme == "unix" {
		return t.Path
	}
	return net.JoinHostPort(t.Host, strconv.Itoa(t.Port))
}

// Dial connects to an active target (tcp:, ssl:, unix:). For ssl: the TLS
// handshake is completed before Dial returns, so certificate errors surface
// here; tlsCfg is required for ssl: and ignored otherwise.
func Dial(ctx context.Context, target string, tlsCfg *TLSConfig) (net.Conn, error) {
	t, err := ParseTarget(target)
	if err != nil {
		return nil, err
	}
	if t.Passive {
		return nil, fmt.Errorf("openflow: dial %s: passive target, use Listen", target)
	}
	var d net.Dialer
	if t.Scheme != "ssl" {
		nc, err := d.DialContext(ctx, t.Network(), t.Address())
		if err != nil {
			return nil, fmt.Errorf("openflow: dial %s: %w", target, err)
		}
		return nc, nil
	}
	if tlsCfg == nil {
		return nil, fmt.Errorf("openflow: dial %s: ssl target needs a TLS configuration", target)
	}
	cfg, err := tlsCfg.ClientConfig(t.Host)
	if err != nil {
		return nil, err
	}
	td := tls.Dialer{NetDialer: &d, Config: cfg}
	nc, err := td.DialContext(ctx, "tcp", t.Address())
	if err != nil {
		return nil, fmt.Errorf("openflow: dial %s: %w", target, err)
	}
	return nc, nil
}

// Listen opens a passive target (ptcp:, pssl:, punix:). For pssl: the
// returned listener yields *tls.Conn whose handshake runs on first use (the
// Conn handshake deadline covers it); tlsCfg is required for pssl: and
// ignored otherwise.
func Listen(target string, tlsCfg *TLSConfig) (net.Listener, error) {
	t, err := ParseTarget(target)
	if err != nil {
		return nil, err
	}
	if !t.Passive {
		return nil, fmt.Errorf("openflow: listen %s: active target, use Dial (passive targets start with p: ptcp:, pssl:, punix:)", target)
	}
	var cfg *tls.Config
	if t.Scheme == "ssl" {
		if tlsCfg == nil {
			return nil, fmt.Errorf("openflow: listen %s: pssl target needs a TLS configuration", target)
		}
		if cfg, err = tlsCfg.ServerConfig(); err != nil {
			return nil, err
		}
	}
	l, err := net.Listen(t.Network(), t.Address())
	if err != nil {
		return nil, fmt.Errorf("openflow: listen %s: %w", target, err)
	}
	if cfg != nil {
		return tls.NewListener(l, cfg), nil
	}
	return l, nil
}
