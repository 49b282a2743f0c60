package probes

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// The YAML shape of a profile file:
//
//	profiles:
//	  - name: solaris
//	    syn: [3s, 9s, 21s]        # cumulative from the first SYN
//	    syn_give_up: 75s
//	    data_rto: {initial: 1s, min: 200ms, max: 60s, retries: 8}
//
// Durations are Go duration strings ("5.8s", "200ms") or bare numbers in
// seconds (5.8).
// maxProfileFileBytes bounds what LoadProfiles reads: a profile file is a
// few lines; anything huge is a mistake.
const maxProfileFileBytes = 1 << 20

type yamlProfileFile struct {
	Profiles []yamlProfile `yaml:"profiles"`
}

type yamlProfile struct {
	Name      string         `yaml:"name"`
	SYN       []yamlDuration `yaml:"syn"`
	SYNGiveUp yamlDuration   `yaml:"syn_give_up"`
	DataRTO   yamlDataRTO    `yaml:"data_rto"`
}

type yamlDataRTO struct {
	Initial yamlDuration `yaml:"initial"`
	Min     yamlDuration `yaml:"min"`
	Max     yamlDuration `yaml:"max"`
	Retries int          `yaml:"retries"`
}

type yamlDuration time.Duration

func (d *yamlDuration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: want a duration such as 5.8s, got a %s", n.Line, nodeKind(n))
	}
	switch n.Tag {
	case "!!int", "!!float":
		var secs float64
		if err := n.Decode(&secs); err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		if math.IsNaN(secs) || math.IsInf(secs, 0) || math.Abs(secs) > math.MaxInt64/float64(time.Second) {
			return fmt.Errorf("line %d: duration %q out of range", n.Line, n.Value)
		}
		*d = yamlDuration(math.Round(secs * float64(time.Second)))
		return nil
	}
	v, err := time.ParseDuration(strings.TrimSpace(n.Value))
	if err != nil {
		return fmt.Errorf("line %d: %q is not a duration (write 5.8s, 200ms or a number of seconds)", n.Line, n.Value)
	}
	*d = yamlDuration(v)
	return nil
}

func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "list"
	case yaml.MappingNode:
		return "mapping"
	}
	return "node"
}

// LoadProfiles reads user-defined timer profiles from YAML, validates each
// and rejects duplicate names or names of built-in profiles (use a new name
// rather than silently redefining "berkeley").
func LoadProfiles(r io.Reader) ([]TimerProfile, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxProfileFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("timer profiles: %w", err)
	}
	if len(data) > maxProfileFileBytes {
		return nil, fmt.Errorf("timer profiles: file larger than %d bytes", maxProfileFileBytes)
	}
	// Strict decode: a typo such as "syn_giveup" is an error, not a
	// silently zero field.
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var f yamlProfileFile
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("timer profiles: empty document")
		}
		return nil, fmt.Errorf("timer profiles: %w", err)
	}
	if len(f.Profiles) == 0 {
		return nil, errors.New("timer profiles: no entries under \"profiles\"")
	}
	lines := profileLines(data, len(f.Profiles))
	seen := map[string]int{}
	out := make([]TimerProfile, 0, len(f.Profiles))
	for i, yp := range f.Profiles {
		line := lines[i]
		p := TimerProfile{
			Name:      yp.Name,
			SYNGiveUp: time.Duration(yp.SYNGiveUp),
			DataRTO: DataRTO{
				Initial: time.Duration(yp.DataRTO.Initial),
				Min:     time.Duration(yp.DataRTO.Min),
				Max:     time.Duration(yp.DataRTO.Max),
				Retries: yp.DataRTO.Retries,
			},
		}
		for _, d := range yp.SYN {
			p.SYN = append(p.SYN, time.Duration(d))
		}
		if err := p.Validate(); err != nil {
			return nil, fmt.Errorf("timer profiles: line %d: %w", line, err)
		}
		key := strings.ToLower(p.Name)
		if key == ProfileBerkeley || key == ProfileLinux {
			return nil, fmt.Errorf("timer profiles: line %d: %q is a built-in profile name; choose another", line, p.Name)
		}
		if prev, dup := seen[key]; dup {
			return nil, fmt.Errorf("timer profiles: line %d: profile %q already defined at line %d", line, p.Name, prev)
		}
		seen[key] = line
		out = append(out, p)
	}
	return out, nil
}

// LoadProfilesFile is LoadProfiles on a file.
func LoadProfilesFile(path string) ([]TimerProfile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("timer profiles: %w", err)
	}
	defer f.Close()
	ps, err := LoadProfiles(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ps, nil
}

// profileLines finds the line of each entry under "profiles", for error
// messages; entries it cannot locate get line 0.
func profileLines(data []byte, n int) []int {
	lines := make([]int, n)
	var root yaml.Node
	if yaml.Unmarshal(data, &root) != nil || len(root.Content) == 0 {
		return lines
	}
	m := root.Content[0]
	if m.Kind != yaml.MappingNode {
		return lines
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value != "profiles" {
			continue
		}
		for j, item := range m.Content[i+1].Content {
			if j < n {
				lines[j] = item.Line
			}
		}
	}
	return lines
}
