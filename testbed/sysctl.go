package testbed

import (
	"fmt"
	"os"
	"strings"
)

// disableIPv6 sets net.ipv6.conf.<ifname>.disable_ipv6=1 in the calling
// thread's namespace (/proc/sys/net is resolved against the opener's
// network namespace).
func disableIPv6(ifname string) error {
	path := "/proc/sys/net/ipv6/conf/" + ifname + "/disable_ipv6"
	if err := os.WriteFile(path, []byte("1"), 0o644); err != nil {
		if os.IsNotExist(err) {
			return nil // kernel without IPv6: nothing to disable
		}
		return fmt.Errorf("disable ipv6 on %s: %w", ifname, err)
	}
	return nil
}

// ipv6Disabled reads net.ipv6.conf.<ifname>.disable_ipv6 in the calling
// thread's namespace.
func ipv6Disabled(ifname string) bool {
	b, err := os.ReadFile("/proc/sys/net/ipv6/conf/" + ifname + "/disable_ipv6")
	if err != nil {
		return os.IsNotExist(err)
	}
	return strings.TrimSpace(string(b)) == "1"
}
