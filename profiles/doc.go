// Package profiles holds readable copies of the switch profiles built into
// the binary, so they can be found at the repository root, read, copied
// and edited: `pseudocong switch --profile profiles/pica8-p3297.yaml` loads
// a file, `--profile pica8-p3297` the built-in. The canonical copies are
// profile/builtin/*.yaml (go:embed cannot reach this directory from there);
// TestCopiesMatchBuiltins fails when the two differ. There is no Go code
// here.
package profiles
