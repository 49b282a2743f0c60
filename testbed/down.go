package testbed

import (
	"errors"
	"fmt"
	"os"

	"github.com/vishvananda/netlink"
)

// DownOptions tunes Down.
type DownOptions struct {
	// StateDir is where Up wrote the state file; default DefaultStateDir.
	StateDir string
}

// Down removes every object of testbed name: the switch-side veth ends
// (which takes their namespace peers with them), the namespaces, the
// links of a chain of switches, and the state file. Removing a testbed that does not exist is not an error.
// Processes still running inside a namespace keep it alive until they
// exit; Down does not kill them but reports them in its error.
func Down(name string, opts DownOptions) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	if opts.StateDir == "" {
		opts.StateDir = DefaultStateDir
	}
	f, err := discover(name)
	if err != nil {
		return err
	}
	var errs []error
	for _, n := range f.indices() {
		errs = append(errs, removeHost(name, n))
	}
	errs = append(errs, removeChainLinks(name, 1))
	if err := os.Remove(statePath(opts.StateDir, name)); err != nil && !os.IsNotExist(err) {
		errs = append(errs, fmt.Errorf("remove state file: %w", err))
	}
	return errors.Join(errs...)
}

// removeHost deletes host n's veth pair and namespace.
func removeHost(name string, n int) error {
	var errs []error
	port := SwitchPortName(name, n)
	if l, err := netlink.LinkByName(port); err == nil {
		if err := netlink.LinkDel(l); err != nil {
			errs = append(errs, fmt.Errorf("delete %s: %w", port, err))
		}
	}
	ns := NamespaceName(name, n)
	if pids := pidsIn(ns); len(pids) > 0 {
		errs = append(errs, fmt.Errorf("netns %s: processes %v still run inside; it lives on until they exit", ns, pids))
	}
	if err := deleteNamespace(ns); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
