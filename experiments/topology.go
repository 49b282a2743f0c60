package experiments

import (
	"embed"
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/pseudocong/pseudocong/internal/yamldoc"
	"github.com/pseudocong/pseudocong/netsim"
)

// Built-in topologies ship inside the binary; topologies/*.yaml are the
// canonical copies (and examples for user-written ones,
// docs/experiments.md "Topologies").
//
//go:embed topologies/*.yaml
var builtinTopologies embed.FS

// DefaultTopology is the network of a spec that names none: paper 000's
// Fig. 3.
const DefaultTopology = "paper000"

// BuiltinTopologyNames lists the topologies shipped in the binary, sorted.
func BuiltinTopologyNames() []string { return yamldoc.Names(builtinTopologies, "topologies") }

// LoadTopology returns a built-in topology by name, a generated one
// ("chain:K": K switches in a row between two hosts), or reads the file
// when the argument looks like a path. The topology is compiled
// (validated) before it is returned.
func LoadTopology(nameOrPath string) (*netsim.Topology, error) {
	if t, ok, err := netsim.Generated(nameOrPath); ok {
		return t, err
	}
	if yamldoc.LooksLikePath(nameOrPath) {
		data, err := os.ReadFile(nameOrPath)
		if err != nil {
			return nil, fmt.Errorf("topology: %w", err)
		}
		return netsim.ParseTopology(data, nameOrPath)
	}
	data, err := builtinTopologies.ReadFile(path.Join("topologies", nameOrPath+".yaml"))
	if err != nil {
		return nil, fmt.Errorf("unknown topology %q (built-in: %s; chain:K; or give a path to a .yaml file)",
			nameOrPath, strings.Join(BuiltinTopologyNames(), ", "))
	}
	return netsim.ParseTopology(data, "builtin:"+nameOrPath)
}
