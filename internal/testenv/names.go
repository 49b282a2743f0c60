package testenv

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"testing"
)

// maxIfNameLen is IFNAMSIZ minus the terminating NUL.
const maxIfNameLen = 15

// NewTag returns a fresh "pc" + 4 hex characters tag. Kernel object names
// built from it do not collide between concurrently running tests.
func NewTag() string {
	var b [2]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err)) // never fails on Linux
	}
	return "pc" + hex.EncodeToString(b[:])
}

// tagged prefixes name with tag and checks it fits an interface name.
func tagged(t testing.TB, tag, name string) string {
	t.Helper()
	full := tag + name
	if len(full) > maxIfNameLen {
		t.Fatalf("name %q too long: %q exceeds %d bytes (keep names to %d bytes)",
			name, full, maxIfNameLen, maxIfNameLen-len(tag))
	}
	return full
}

// interfaceExists reports whether a link of that name exists in the root
// namespace (used to avoid reusing a tag that is already taken).
func interfaceExists(name string) bool {
	_, err := net.InterfaceByName(name)
	return err == nil
}

// shortTempDir makes a private directory removed at cleanup. Unlike
// t.TempDir its path is short: unix socket paths (OVS control sockets)
// must fit in 108 bytes, and test names can be long.
func shortTempDir(t testing.TB, what string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "pc-"+what+"-")
	if err != nil {
		t.Fatalf("temp dir: %v", err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(dir); err != nil {
			t.Logf("remove %s: %v", dir, err)
		}
	})
	return dir
}
