package testbed

import (
	"errors"
	"fmt"
	"slices"

	"github.com/vishvananda/netlink"
)

// found is what exists of a testbed, by host index.
type found struct {
	namespaces map[int]string
	ports      map[int]netlink.Link
}

func (f found) indices() []int {
	var out []int
	for n := range f.namespaces {
		out = append(out, n)
	}
	for n := range f.ports {
		if _, dup := f.namespaces[n]; !dup {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// discover lists the namespaces <name>-h<N> and root links <name>-s<N>.
func discover(name string) (found, error) {
	f := found{namespaces: map[int]string{}, ports: map[int]netlink.Link{}}
	nss, err := listNamespaces()
	if err != nil {
		return f, err
	}
	for _, ns := range nss {
		if n, ok := parseIndexed(ns, name, "h"); ok {
			f.namespaces[n] = ns
		}
	}
	links, err := linkList()
	if err != nil {
		return f, fmt.Errorf("list links: %w", err)
	}
	for _, l := range links {
		if n, ok := parseIndexed(l.Attrs().Name, name, "s"); ok {
			f.ports[n] = l
		}
	}
	return f, nil
}

// linkList is netlink.LinkList, retried while the kernel reports the dump
// interrupted (NLM_F_DUMP_INTR: links were added or removed meanwhile,
// e.g. by another testbed going up or down at the same time), when the
// list may be incomplete. A few retries suffice: each dump takes
// microseconds.
func linkList() ([]netlink.Link, error) {
	var err error
	for range 20 {
		var links []netlink.Link
		links, err = netlink.LinkList()
		if !errors.Is(err, netlink.ErrDumpInterrupted) {
			return links, err
		}
	}
	return nil, err
}
