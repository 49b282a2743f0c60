// Package testenv starts real peers for integration tests — Open vSwitch,
// ovs-testcontroller, network namespaces with veth pairs, tshark captures,
// Prometheus — each in a private temporary directory, and removes them with
// t.Cleanup even when the test fails.
//
// It is imported only by _test.go files. Helpers that create something fail
// the test on error (call them from the test goroutine); helpers that query
// or wait return an error so a test can also assert a negative outcome.
//
// Names of kernel objects (bridges, interfaces, namespaces) live in the root
// namespace and are shared by every concurrently running test binary, so
// they carry a random "pc" + 4 hex tag. Interface names are at most 15
// bytes, which leaves 9 for the caller's part.
//
// Requirements (root, commands) skip a test locally but fail it when the
// environment variable CI is set (to anything but "false" or "0"): CI must
// never pass by silently skipping. scripts/install-deps.sh installs the
// commands.
package testenv
