package profile

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// The calibrated profiles ship inside the binary. The files in builtin/ are
// the canonical copies.
//
//go:embed builtin/*.yaml
var builtin embed.FS

// Names lists the built-in profiles, sorted.
func Names() []string {
	entries, err := fs.ReadDir(builtin, "builtin")
	if err != nil { // cannot happen: the directory is embedded
		panic(fmt.Sprintf("profile: embedded builtin directory: %v", err))
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

// Load returns a built-in profile by name, or reads the file at
// nameOrPath when it looks like a path (contains a slash or ends in
// .yaml/.yml). The profile is validated.
func Load(nameOrPath string) (*Profile, error) {
	if looksLikePath(nameOrPath) {
		data, err := os.ReadFile(nameOrPath)
		if err != nil {
			return nil, fmt.Errorf("profile: %w", err)
		}
		return Parse(data, nameOrPath)
	}
	data, err := builtin.ReadFile(path.Join("builtin", nameOrPath+".yaml"))
	if err != nil {
		return nil, fmt.Errorf("profile: unknown profile %q (built-in: %s; or give a path to a .yaml file)",
			nameOrPath, strings.Join(Names(), ", "))
	}
	return Parse(data, "builtin:"+nameOrPath)
}

func looksLikePath(s string) bool {
	return strings.ContainsRune(s, '/') || strings.HasSuffix(s, ".yaml") || strings.HasSuffix(s, ".yml")
}

// Parse decodes and validates one profile document. source names it in
// errors and in Profile.Source.
func Parse(data []byte, source string) (*Profile, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var p Profile
	if err := dec.Decode(&p); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("profile %s: empty document", source)
		}
		return nil, fmt.Errorf("profile %s: %w", source, err)
	}
	var extra any
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("profile %s: more than one YAML document", source)
	}
	p.Source = source
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("profile %s: %w", source, err)
	}
	return &p, nil
}
