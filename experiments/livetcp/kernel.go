package livetcp

import (
	"fmt"
	"os/exec"
)

// KernelTBF puts the kernel's own tbf on a root-namespace interface (a
// switch port's veth: the switch's AF_PACKET writes pass through it) and
// returns the function that removes it: the anchor our shaper is
// compared against.
func KernelTBF(iface, rate, burst, latency string) (undo func() error, err error) {
	out, err := exec.Command("tc", "qdisc", "replace", "dev", iface, "root", "tbf", "rate", rate, "burst", burst, "latency", latency).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("livetcp: tc tbf on %s: %v: %s", iface, err, out)
	}
	return func() error {
		out, err := exec.Command("tc", "qdisc", "del", "dev", iface, "root").CombinedOutput()
		if err != nil {
			return fmt.Errorf("livetcp: tc del on %s: %v: %s", iface, err, out)
		}
		return nil
	}, nil
}
