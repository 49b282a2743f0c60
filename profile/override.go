package profile

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/pseudocong/pseudocong/internal/yamldoc"
)

// Document returns the YAML text of a built-in profile (by name) or of
// the file at nameOrPath, as Load would read it.
func Document(nameOrPath string) ([]byte, error) {
	if yamldoc.LooksLikePath(nameOrPath) {
		data, err := os.ReadFile(nameOrPath)
		if err != nil {
			return nil, fmt.Errorf("profile: %w", err)
		}
		return data, nil
	}
	data, err := builtin.ReadFile(path.Join("builtin", nameOrPath+".yaml"))
	if err != nil {
		return nil, fmt.Errorf("profile: unknown profile %q (built-in: %s)", nameOrPath, strings.Join(Names(), ", "))
	}
	return data, nil
}

// Override returns doc with every dotted key ("tcam.layout",
// "agent.scheduling") set to its value, written as a YAML scalar in the
// same syntax a profile file uses ("4.2ms", "lowest-first", "1000"), and
// checks that the result is a valid profile. The document is edited as a
// YAML tree rather than decoded and re-encoded, because durations must
// stay strings (Parse rejects bare numbers) and comments stay where they
// were. A missing key is added to its section; a missing section is an
// error (a typo would otherwise start a section nobody reads).
func Override(doc []byte, set map[string]string) ([]byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(doc, &root); err != nil {
		return nil, fmt.Errorf("profile override: %w", err)
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) != 1 || root.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("profile override: the document is not a YAML mapping")
	}
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	slices.Sort(keys) // deterministic output for the same overrides
	for _, k := range keys {
		if err := setPath(root.Content[0], strings.Split(k, "."), set[k], k); err != nil {
			return nil, err
		}
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&root); err != nil {
		return nil, fmt.Errorf("profile override: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("profile override: %w", err)
	}
	if _, err := Parse(b.Bytes(), "override"); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// setPath sets the scalar at path under mapping m.
func setPath(m *yaml.Node, path []string, value, full string) error {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value != path[0] {
			continue
		}
		v := m.Content[i+1]
		if len(path) > 1 {
			if v.Kind != yaml.MappingNode {
				return fmt.Errorf("profile override %s: %s is not a section", full, path[0])
			}
			return setPath(v, path[1:], value, full)
		}
		if v.Kind != yaml.ScalarNode {
			return fmt.Errorf("profile override %s: not a single value", full)
		}
		*v = yaml.Node{Kind: yaml.ScalarNode, Value: value, LineComment: v.LineComment, HeadComment: v.HeadComment}
		return nil
	}
	if len(path) > 1 {
		return fmt.Errorf("profile override %s: no section %q", full, path[0])
	}
	m.Content = append(m.Content,
		&yaml.Node{Kind: yaml.ScalarNode, Value: path[0]},
		&yaml.Node{Kind: yaml.ScalarNode, Value: value})
	return nil
}
