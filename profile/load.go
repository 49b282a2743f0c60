package profile

import (
	"embed"
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/pseudocong/pseudocong/internal/yamldoc"
)

// The calibrated profiles ship inside the binary. The files in builtin/ are
// the canonical copies.
//
//go:embed builtin/*.yaml
var builtin embed.FS

// Names lists the built-in profiles, sorted.
func Names() []string { return yamldoc.Names(builtin, "builtin") }

// Load returns a built-in profile by name, or reads the file at
// nameOrPath when it looks like a path (contains a slash or ends in
// .yaml/.yml). The profile is validated.
func Load(nameOrPath string) (*Profile, error) {
	if yamldoc.LooksLikePath(nameOrPath) {
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

// Parse decodes and validates one profile document. source names it in
// errors and in Profile.Source.
func Parse(data []byte, source string) (*Profile, error) {
	var p Profile
	if err := yamldoc.DecodeStrict(data, &p); err != nil {
		return nil, fmt.Errorf("profile %s: %w", source, err)
	}
	p.Source = source
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("profile %s: %w", source, err)
	}
	return &p, nil
}
