// Package nsexec runs a function inside a network namespace. A Linux
// namespace belongs to an OS thread, not to a goroutine, so the function
// runs on a locked thread switched into the namespace and back. Sockets it
// opens stay in that namespace for their whole life; goroutines it starts
// do NOT inherit the namespace.
package nsexec

import (
	"fmt"
	"runtime"

	"github.com/vishvananda/netns"
)

// Do runs fn in namespace target and switches the thread back afterwards.
// If the thread is already in target, fn just runs.
func Do(target netns.NsHandle, fn func() error) error {
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("current netns: %w", err)
	}
	defer orig.Close()
	if orig.Equal(target) {
		defer runtime.UnlockOSThread()
		return fn()
	}
	if err := netns.Set(target); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("enter netns: %w", err)
	}
	defer func() {
		if err := netns.Set(orig); err != nil {
			// Leave the thread locked: the runtime discards it when the
			// goroutine ends instead of reusing a thread stuck in the
			// wrong namespace.
			return
		}
		runtime.UnlockOSThread()
	}()
	return fn()
}

// DoNamed is Do for a namespace named as iproute2 names it (/run/netns/NAME).
func DoNamed(name string, fn func() error) error {
	target, err := netns.GetFromName(name)
	if err != nil {
		return fmt.Errorf("netns %s: %w", name, err)
	}
	defer target.Close()
	if err := Do(target, fn); err != nil {
		return fmt.Errorf("netns %s: %w", name, err)
	}
	return nil
}
