package openflow

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestParseTarget(t *testing.T) {
	tests := []struct {
		in   string
		want Target
		str  string // String() round trip; "" = same as in
	}{
		{"tcp:127.0.0.1:6633", Target{Scheme: "tcp", Host: "127.0.0.1", Port: 6633}, ""},
		{"tcp:10.0.0.1", Target{Scheme: "tcp", Host: "10.0.0.1", Port: 6653}, "tcp:10.0.0.1:6653"},
		{"tcp:[::1]:7000", Target{Scheme: "tcp", Host: "::1", Port: 7000}, ""},
		{"tcp:[fe80::1]", Target{Scheme: "tcp", Host: "fe80::1", Port: 6653}, "tcp:[fe80::1]:6653"},
		{"ssl:ctl.example:6653", Target{Scheme: "ssl", Host: "ctl.example", Port: 6653}, ""},
		{"ptcp:", Target{Scheme: "tcp", Passive: true, Port: 6653}, "ptcp:6653"},
		{"ptcp:6633", Target{Scheme: "tcp", Passive: true, Port: 6633}, ""},
		{"ptcp:6653:127.0.0.1", Target{Scheme: "tcp", Passive: true, Host: "127.0.0.1", Port: 6653}, ""},
		{"ptcp::127.0.0.1", Target{Scheme: "tcp", Passive: true, Host: "127.0.0.1", Port: 6653}, "ptcp:6653:127.0.0.1"},
		{"ptcp:0:127.0.0.1", Target{Scheme: "tcp", Passive: true, Host: "127.0.0.1", Port: 0}, ""},
		{"ptcp:6653:[::1]", Target{Scheme: "tcp", Passive: true, Host: "::1", Port: 6653}, ""},
		{"pssl:6654", Target{Scheme: "ssl", Passive: true, Port: 6654}, ""},
		{"unix:/run/of.sock", Target{Scheme: "unix", Path: "/run/of.sock"}, ""},
		{"punix:/tmp/x.sock", Target{Scheme: "unix", Passive: true, Path: "/tmp/x.sock"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseTarget(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			str := tc.str
			if str == "" {
				str = tc.in
			}
			if got.String() != str {
				t.Fatalf("String() = %q, want %q", got.String(), str)
			}
		})
	}
}

func TestParseTargetErrors(t *testing.T) {
	tests := []struct{ in, mention string }{
		{"127.0.0.1:6653", "unknown scheme"},
		{"nocolon", "SCHEME"},
		{"http:1.2.3.4", "unknown scheme"},
		{"tcp:", "missing host"},
		{"tcp::6653", "missing host"},
		{"tcp:1.2.3.4:0", "bad port"},
		{"tcp:1.2.3.4:70000", "bad port"},
		{"tcp:1.2.3.4:x", "bad port"},
		{"tcp:::1", "brackets"},
		{"tcp:[::1", "unclosed"},
		{"tcp:[::1]x", "after ']'"},
		{"ptcp:abc", "bad port"},
		{"ptcp:6653:[::1", "unclosed"},
		{"unix:", "empty socket path"},
		{"punix:", "empty socket path"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			_, err := ParseTarget(tc.in)
			if err == nil {
				t.Fatalf("accepted")
			}
			if !strings.Contains(err.Error(), tc.mention) || !strings.Contains(err.Error(), tc.in) {
				t.Fatalf("error %q should mention %q and the target", err, tc.mention)
			}
		})
	}
}

func TestDialListenWrongDirection(t *testing.T) {
	if _, err := Listen("tcp:127.0.0.1:1", nil); err == nil || !strings.Contains(err.Error(), "use Dial") {
		t.Fatalf("Listen on active target: %v", err)
	}
	if _, err := Dial(context.Background(), "ptcp:0", nil); err == nil || !strings.Contains(err.Error(), "use Listen") {
		t.Fatalf("Dial on passive target: %v", err)
	}
	if _, err := Listen("pssl:0:127.0.0.1", nil); err == nil || !strings.Contains(err.Error(), "TLS") {
		t.Fatalf("pssl without TLS config: %v", err)
	}
	if _, err := Dial(context.Background(), "ssl:127.0.0.1:1", nil); err == nil || !strings.Contains(err.Error(), "TLS") {
		t.Fatalf("ssl without TLS config: %v", err)
	}
}

// TestDialListenPlain connects over ptcp/tcp and punix/unix and completes
// an OpenFlow handshake on each.
func TestDialListenPlain(t *testing.T) {
	sock := t.TempDir() + "/of.sock"
	for _, passive := range []string{"ptcp:0:127.0.0.1", "punix:" + sock} {
		t.Run(passive, func(t *testing.T) {
			l, err := Listen(passive, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			active := "tcp:" + l.Addr().String()
			if strings.HasPrefix(passive, "punix:") {
				active = "unix:" + sock
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			a, b := handshakeOver(t, ctx, l, active, nil)
			if _, err := a.Echo(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := b.Echo(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}
