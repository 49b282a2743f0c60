package testbed

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/vishvananda/netns"

	"github.com/pseudocong/pseudocong/internal/nsexec"
)

// netnsDir is where named namespaces are bind-mounted (iproute2's place).
const netnsDir = "/run/netns"

// Do runs fn on an OS thread switched into the named namespace and
// switches the thread back afterwards (internal/nsexec). Sockets fn opens
// stay in that namespace for their whole life; goroutines fn starts do NOT
// inherit it.
func Do(nsName string, fn func() error) error { return nsexec.DoNamed(nsName, fn) }

// DoHandle is Do for an open namespace handle.
func DoHandle(target netns.NsHandle, fn func() error) error { return nsexec.Do(target, fn) }

// namespaceExists reports whether /run/netns/<nsName> is a mounted
// namespace.
func namespaceExists(nsName string) bool {
	h, err := netns.GetFromName(nsName)
	if err != nil {
		return false
	}
	h.Close()
	return true
}

// createNamespace creates a named namespace (like `ip netns add`) without
// leaving the calling goroutine in it. An existing one is reused.
func createNamespace(nsName string) error {
	if namespaceExists(nsName) {
		return nil
	}
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("current netns: %w", err)
	}
	defer orig.Close()
	h, err := netns.NewNamed(nsName) // switches this thread into it
	if err != nil {
		if netns.Set(orig) == nil {
			runtime.UnlockOSThread()
		}
		return fmt.Errorf("create netns %s: %w", nsName, err)
	}
	h.Close()
	if err := netns.Set(orig); err != nil {
		return fmt.Errorf("create netns %s: return to original namespace: %w", nsName, err)
	}
	runtime.UnlockOSThread()
	return nil
}

// deleteNamespace unmounts and removes a named namespace (like `ip netns
// del`). The namespace itself, and the veth ends inside it, live on while
// a process still runs in it; Down reports such processes.
func deleteNamespace(nsName string) error {
	err := netns.DeleteNamed(nsName)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("delete netns %s: %w", nsName, err)
	}
	return nil
}

// listNamespaces returns the names under /run/netns.
func listNamespaces() ([]string, error) {
	entries, err := os.ReadDir(netnsDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", netnsDir, err)
	}
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out, nil
}

// pidsIn returns the processes whose network namespace is nsName's (what
// `ip netns pids` prints).
func pidsIn(nsName string) []int {
	var want, have os.FileInfo
	want, err := os.Stat(filepath.Join(netnsDir, nsName))
	if err != nil {
		return nil
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/ns/net")
	var pids []int
	for _, p := range procs {
		if have, err = os.Stat(p); err != nil || !os.SameFile(want, have) {
			continue
		}
		var pid int
		if _, err := fmt.Sscanf(p, "/proc/%d/ns/net", &pid); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}
