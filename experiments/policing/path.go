package policing

import (
	"fmt"
	"os"
	"time"

	"github.com/pseudocong/pseudocong/netsim"
)

// Hop is one link of the path from the client to a server, oriented in
// the upload direction: From sends uploads, To sends downloads.
type Hop struct {
	Name     string
	From, To netsim.End
	Rate     int64 // bit/s, both directions
	// Delay is the one-way propagation delay (both directions).
	Delay time.Duration
	// UpQdisc is the queue at From's sending end (uploads), DownQdisc the
	// one at To's (downloads): netsim.ParseQdisc specs.
	UpQdisc, DownQdisc string
	// Loss is a netsim.ParseLoss spec for both directions; empty: none.
	Loss string
}

// Path is the client → server path through the topology.
type Path struct {
	Client, Server string
	Hops           []Hop
	// Switches are the switch names in path order.
	Switches []string
}

// LoadTopology reads and compiles a topology file.
func LoadTopology(file string) (*netsim.Plan, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("policing: %w", err)
	}
	t, err := netsim.ParseTopology(data, file)
	if err != nil {
		return nil, fmt.Errorf("policing: %w", err)
	}
	return t.Compile()
}

type nodeID struct {
	kind netsim.NodeKind
	i    int
}

// FindPath is the unique shortest path from host client to host server
// (breadth first over the plan's links).
func FindPath(plan *netsim.Plan, client, server string) (*Path, error) {
	ci, ok := plan.Host(client)
	if !ok {
		return nil, fmt.Errorf("policing: topology %s has no host %q", plan.Name, client)
	}
	si, ok := plan.Host(server)
	if !ok {
		return nil, fmt.Errorf("policing: topology %s has no host %q", plan.Name, server)
	}
	start, goal := nodeID{netsim.NodeHost, ci}, nodeID{netsim.NodeHost, si}
	type via struct {
		prev nodeID
		link int
	}
	seen := map[nodeID]via{start: {link: -1}}
	queue := []nodeID{start}
	for len(queue) > 0 && func() bool { _, ok := seen[goal]; return !ok }() {
		n := queue[0]
		queue = queue[1:]
		for li, l := range plan.Links {
			var other netsim.End
			switch {
			case l.A.Kind == n.kind && l.A.Node == n.i:
				other = l.B
			case l.B.Kind == n.kind && l.B.Node == n.i:
				other = l.A
			default:
				continue
			}
			o := nodeID{other.Kind, other.Node}
			if _, ok := seen[o]; ok {
				continue
			}
			// Hosts other than the goal do not forward.
			if o.kind == netsim.NodeHost && o != goal {
				continue
			}
			seen[o] = via{prev: n, link: li}
			queue = append(queue, o)
		}
	}
	if _, ok := seen[goal]; !ok {
		return nil, fmt.Errorf("policing: topology %s: no path from %s to %s", plan.Name, client, server)
	}
	var links []int
	for n := goal; n != start; n = seen[n].prev {
		links = append(links, seen[n].link)
	}
	p := &Path{Client: client, Server: server}
	at := start
	for i := len(links) - 1; i >= 0; i-- {
		l := plan.Links[links[i]]
		h := Hop{Name: l.Name(), Rate: l.Rate, Loss: l.Loss}
		if l.HasDelay {
			h.Delay = l.Delay
		}
		if l.A.Kind == at.kind && l.A.Node == at.i {
			h.From, h.To, h.UpQdisc, h.DownQdisc = l.A, l.B, l.QdiscA, l.QdiscB
		} else {
			h.From, h.To, h.UpQdisc, h.DownQdisc = l.B, l.A, l.QdiscB, l.QdiscA
		}
		if h.UpQdisc == "" {
			h.UpQdisc = netsim.DefaultQdisc
		}
		if h.DownQdisc == "" {
			h.DownQdisc = netsim.DefaultQdisc
		}
		if h.To.Kind == netsim.NodeSwitch {
			p.Switches = append(p.Switches, plan.Switches[h.To.Node].Name)
		}
		p.Hops = append(p.Hops, h)
		at = nodeID{h.To.Kind, h.To.Node}
	}
	return p, nil
}

// ApplyMode puts a mode's CPE limit on the path: cpeQdisc (if not empty)
// becomes the queue of the CPE's WAN port (uploads: the hop leaving
// switch cpe towards another switch) and of its LAN port (downloads: the
// hop from the client into cpe, at cpe's end); wanLoss (if not empty)
// the loss of that WAN hop. It returns a modified copy.
func (p *Path) ApplyMode(cpe, cpeQdisc, wanLoss string, plan *netsim.Plan) (*Path, error) {
	q := *p
	q.Hops = append([]Hop(nil), p.Hops...)
	ci, ok := plan.Switch(cpe)
	if !ok {
		return nil, fmt.Errorf("policing: topology %s has no switch %q", plan.Name, cpe)
	}
	isCPE := func(e netsim.End) bool { return e.Kind == netsim.NodeSwitch && e.Node == ci }
	wan, lan := false, false
	for i := range q.Hops {
		h := &q.Hops[i]
		if isCPE(h.From) && h.To.Kind == netsim.NodeSwitch {
			wan = true
			if cpeQdisc != "" {
				h.UpQdisc = cpeQdisc
			}
			if wanLoss != "" {
				h.Loss = wanLoss
			}
		}
		if isCPE(h.To) && h.From.Kind == netsim.NodeHost {
			lan = true
			if cpeQdisc != "" {
				h.DownQdisc = cpeQdisc
			}
		}
	}
	if !wan || !lan {
		return nil, fmt.Errorf("policing: switch %s is not between the client and a switch on the path", cpe)
	}
	return &q, nil
}

// BaseRTT is the path's round-trip propagation delay.
func (p *Path) BaseRTT() time.Duration {
	var d time.Duration
	for _, h := range p.Hops {
		d += 2 * h.Delay
	}
	return d
}
