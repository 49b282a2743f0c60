// Package profiles puts the switch profiles built into the binary at the
// repository root, where they can be found, read, copied and edited:
// `pseudocong switch --profile profiles/pica8-p3297.yaml` loads a file,
// `--profile pica8-p3297` the built-in. The files here are symbolic links
// to the canonical profile/builtin/*.yaml (which go:embed reads; it cannot
// reach this directory from there), so the two cannot drift apart;
// TestCopiesMatchBuiltins checks that every built-in has its link. Regular
// files are profiles measured with `pseudocong calibrate` (ovs-netdev.yaml:
// Open vSwitch's userspace datapath), loaded by path only;
// TestMeasuredProfilesLoad checks they load. There is no Go code here.
package profiles
