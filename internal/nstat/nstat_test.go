package nstat

import (
	"strings"
	"testing"
)

// out is nstat 6.x's -asz output as printed here (a namespace after one
// CUBIC run).
const out = `#kernel
TcpRetransSegs                  27                 0.0
TcpExtTCPSackRecovery           10                 0.0
TcpExtTCPHystartDelayCwnd       50                 0.0
`

func TestParse(t *testing.T) {
	names := []string{"TcpRetransSegs", "TcpExtTCPSackRecovery", "TcpExtTCPHystartDelayCwnd"}
	m, err := Parse([]byte(out), names)
	if err != nil {
		t.Fatal(err)
	}
	if m["TcpRetransSegs"] != 27 || m["TcpExtTCPSackRecovery"] != 10 || m["TcpExtTCPHystartDelayCwnd"] != 50 || len(m) != 3 {
		t.Errorf("got %v", m)
	}
	for _, bad := range []string{
		strings.Replace(out, "TcpExtTCPSackRecovery", "TcpExtTCPSackRecoveryFail", 1),
		strings.Replace(out, "27 ", "x7 ", 1),
	} {
		if _, err := Parse([]byte(bad), names); err == nil {
			t.Errorf("no error for %q", bad)
		}
	}
}
