//go:build integration

package live

import "golang.org/x/sys/unix"

var unixECONNREFUSED = unix.ECONNREFUSED
