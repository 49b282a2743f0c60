package testbed

import (
	"strings"
	"testing"
)

func TestValidateName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"pc", true},
		{"a", true},
		{"lab2", true},
		{"abcdefghij", true},   // 10 bytes: "abcdefghij-s254" is 15
		{"abcdefghijk", false}, // 11 bytes: one too many
		{"", false},
		{"2lab", false},
		{"pc-x", false}, // '-' would make prefixes ambiguous
		{"PC", false},
		{"p c", false},
	}
	for _, tt := range tests {
		err := ValidateName(tt.name)
		if (err == nil) != tt.ok {
			t.Errorf("ValidateName(%q) = %v, want ok=%v", tt.name, err, tt.ok)
		}
		if tt.ok {
			if l := len(SwitchPortName(tt.name, MaxHosts)); l > 15 {
				t.Errorf("%q: port name %d bytes", tt.name, l)
			}
		}
	}
}

func TestParseIndexed(t *testing.T) {
	tests := []struct {
		s, name, kind string
		n             int
		ok            bool
	}{
		{"pc-h1", "pc", "h", 1, true},
		{"pc-s254", "pc", "s", 254, true},
		{"pc-s255", "pc", "s", 0, false},
		{"pc-s0", "pc", "s", 0, false},
		{"pc-s01", "pc", "s", 0, false},
		{"pc2-s1", "pc", "s", 0, false}, // another testbed
		{"pc-h1", "pc", "s", 0, false},
		{"pc-s1x", "pc", "s", 0, false},
		{"pc-s", "pc", "s", 0, false},
	}
	for _, tt := range tests {
		n, ok := parseIndexed(tt.s, tt.name, tt.kind)
		if n != tt.n || ok != tt.ok {
			t.Errorf("parseIndexed(%q,%q,%q) = %d,%v want %d,%v", tt.s, tt.name, tt.kind, n, ok, tt.n, tt.ok)
		}
	}
}

func TestHostSpec(t *testing.T) {
	h := hostSpec("lab", 7)
	if h.Netns != "lab-h7" || h.SwitchPort != "lab-s7" || h.Iface != "eth0" {
		t.Errorf("names: %+v", h)
	}
	if h.Addr.String() != "10.0.0.7/24" {
		t.Errorf("addr %s", h.Addr)
	}
	if h.MAC != "02:70:63:00:00:07" || !strings.EqualFold(h.HardwareAddr().String(), h.MAC) {
		t.Errorf("mac %s", h.MAC)
	}
	if SwitchPortMAC(7).String() == h.MAC {
		t.Errorf("switch end and host end share a MAC")
	}
}
