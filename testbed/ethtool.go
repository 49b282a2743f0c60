package testbed

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ethtool commands from <linux/ethtool.h>.
const (
	ethtoolGTXCSUM = 0x00000016 // get TX checksum offload
	ethtoolSTXCSUM = 0x00000017 // set TX checksum offload
)

// ethtoolValue is struct ethtool_value.
type ethtoolValue struct {
	cmd  uint32
	data uint32
}

// ifreqData is struct ifreq with ifr_data: the name then a pointer,
// padded to sizeof(struct ifreq) = 40.
type ifreqData struct {
	name [unix.IFNAMSIZ]byte
	data unsafe.Pointer
	_    [40 - unix.IFNAMSIZ - unsafe.Sizeof(uintptr(0))]byte
}

// ethtoolValueIoctl issues SIOCETHTOOL with an ethtool_value on ifname in
// the calling thread's network namespace.
func ethtoolValueIoctl(ifname string, v *ethtoolValue) error {
	if len(ifname) >= unix.IFNAMSIZ {
		return fmt.Errorf("ethtool %s: name too long", ifname)
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("ethtool %s: socket: %w", ifname, err)
	}
	defer unix.Close(fd)
	var ifr ifreqData
	copy(ifr.name[:], ifname)
	ifr.data = unsafe.Pointer(v)
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr))); errno != 0 {
		return fmt.Errorf("ethtool %s cmd %#x: %w", ifname, v.cmd, errno)
	}
	return nil
}

// SetTxChecksum turns TX checksum offload on or off (ethtool -K IF tx
// on|off) for ifname in the calling thread's namespace. Turning it off
// also turns off the features that depend on it (TSO, GSO checksums).
func SetTxChecksum(ifname string, on bool) error {
	v := ethtoolValue{cmd: ethtoolSTXCSUM}
	if on {
		v.data = 1
	}
	return ethtoolValueIoctl(ifname, &v)
}

// TxChecksum reports whether TX checksum offload is on for ifname in the
// calling thread's namespace.
func TxChecksum(ifname string) (bool, error) {
	v := ethtoolValue{cmd: ethtoolGTXCSUM}
	if err := ethtoolValueIoctl(ifname, &v); err != nil {
		return false, err
	}
	return v.data != 0, nil
}
