package flowtable

import (
	"time"

	"github.com/pseudocong/pseudocong/openflow"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func ip(a, b, c, d byte) uint32 { return uint32(a)<<24 | uint32(b)<<16 | uint32(c)<<8 | uint32(d) }

// exactMatch is a fully specified TCP match.
func exactMatch(inPort uint16, src, dst uint32, sport, dport uint16) openflow.Match {
	return openflow.Match{
		InPort: inPort, DlSrc: [6]byte{0, 0, 0, 0, 0, 1}, DlDst: [6]byte{0, 0, 0, 0, 0, 2},
		DlVlan: openflow.VlanNone, DlType: 0x0800, NwProto: 6,
		NwSrc: src, NwDst: dst, TpSrc: sport, TpDst: dport,
	}
}

// wildMatch wildcards everything but the given IPv4 destination prefix.
func wildDst(dst uint32, prefix int) openflow.Match {
	m := openflow.Match{Wildcards: openflow.WildcardAll &^ openflow.WildcardDlType, DlType: 0x0800, NwDst: dst}
	m.SetNwDstPrefixLen(prefix)
	return m
}

func out(p uint16) []openflow.Action { return []openflow.Action{openflow.ActionOutput{Port: p}} }

func fm(cmd uint16, m openflow.Match, prio uint16, actions []openflow.Action) *openflow.FlowMod {
	return &openflow.FlowMod{Match: m, Command: cmd, Priority: prio, BufferID: openflow.NoBuffer,
		OutPort: openflow.PortNone, Actions: actions}
}

type recListener struct{ events []string }

func (r *recListener) EntryAdded(e *Entry)    { r.events = append(r.events, "add") }
func (r *recListener) EntryModified(e *Entry) { r.events = append(r.events, "mod") }
func (r *recListener) EntryRemoved(e *Entry, reason uint8) {
	r.events = append(r.events, "rm"+string('0'+reason))
}
