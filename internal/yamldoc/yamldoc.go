// Package yamldoc holds what every YAML-configured part of the project
// (switch profiles, experiment specs) does the same way: list the built-in
// documents embedded in the binary, tell a name from a path, and decode
// exactly one document strictly.
package yamldoc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Names lists the .yaml documents in dir of fsys, without the suffix, sorted.
// It panics if dir cannot be read: callers pass an embedded directory.
func Names(fsys fs.FS, dir string) []string {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		panic(fmt.Sprintf("yamldoc: embedded directory %s: %v", dir, err))
	}
	var names []string
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".yaml"); ok {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// LooksLikePath reports whether a command-line argument names a file (it has
// a slash or a .yaml/.yml suffix) rather than a built-in document.
func LooksLikePath(s string) bool {
	return strings.ContainsRune(s, '/') || strings.HasSuffix(s, ".yaml") || strings.HasSuffix(s, ".yml")
}

// DecodeStrict decodes data, which must hold exactly one YAML document, into
// v. Unknown keys are errors, so a typo cannot silently leave a default in
// place.
func DecodeStrict(data []byte, v any) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return errors.New("empty document")
		}
		return err
	}
	var extra any
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return errors.New("more than one YAML document")
	}
	return nil
}
