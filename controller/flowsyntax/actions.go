package flowsyntax

import (
	"fmt"
	"strings"

	"github.com/pseudocong/pseudocong/openflow"
)

// parseActions parses the text after "actions=": a comma separated list,
// "drop" (alone) for none. Parentheses group, so enqueue(1,2) is one action.
func parseActions(s string) ([]openflow.Action, error) {
	toks, err := splitActions(s)
	if err != nil {
		return nil, err
	}
	if len(toks) == 0 {
		return nil, &Error{Token: "actions=" + s, Msg: "empty action list (use actions=drop)"}
	}
	if len(toks) == 1 && strings.EqualFold(toks[0], "drop") {
		return nil, nil
	}
	actions := make([]openflow.Action, 0, len(toks))
	for _, tok := range toks {
		a, err := parseAction(tok)
		if err != nil {
			return nil, &Error{Token: tok, Msg: err.Error()}
		}
		actions = append(actions, a)
	}
	return actions, nil
}

// splitActions splits on commas and blanks outside parentheses.
func splitActions(s string) ([]string, error) {
	var toks []string
	depth, start := 0, 0
	flush := func(end int) {
		if t := strings.TrimSpace(s[start:end]); t != "" {
			toks = append(toks, t)
		}
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '(':
			depth++
		case c == ')':
			if depth == 0 {
				return nil, &Error{Token: s, Msg: "unbalanced ')'"}
			}
			depth--
		case depth == 0 && isSeparator(c):
			flush(i)
			start = i + 1
		}
	}
	if depth != 0 {
		return nil, &Error{Token: s, Msg: "unbalanced '('"}
	}
	flush(len(s))
	return toks, nil
}

// parseAction parses one action: NAME, NAME:ARG or NAME(ARGS), or a bare
// port number meaning output to it.
func parseAction(tok string) (openflow.Action, error) {
	name, arg, hasArg := strings.Cut(tok, ":")
	if !hasArg {
		if open := strings.IndexByte(tok, '('); open > 0 && strings.HasSuffix(tok, ")") {
			name, arg, hasArg = tok[:open], tok[open+1:len(tok)-1], true
		}
	}
	name = strings.ToLower(name)
	if !hasArg {
		switch name {
		case "strip_vlan":
			return openflow.ActionStripVlan{}, nil
		case "drop":
			return nil, fmt.Errorf("drop must be the only action")
		case "controller":
			// ovs-ofctl's default: send the whole packet.
			return openflow.ActionOutput{Port: openflow.PortController, MaxLen: 0xffff}, nil
		}
		if p, ok := portNames[name]; ok && p != openflow.PortNone && p != openflow.PortTable {
			return openflow.ActionOutput{Port: p}, nil
		}
		v, err := parseUint(tok, 16)
		if err != nil {
			return nil, fmt.Errorf("unknown action")
		}
		if v == 0 || v > uint64(openflow.PortMax) {
			return nil, fmt.Errorf("output port must be 1..%d or a port name", openflow.PortMax)
		}
		return openflow.ActionOutput{Port: uint16(v)}, nil
	}
	switch name {
	case "output":
		p, err := parsePort(arg)
		if err != nil {
			return nil, err
		}
		return openflow.ActionOutput{Port: p}, nil
	case "controller":
		arg = strings.TrimPrefix(strings.ToLower(arg), "max_len=")
		v, err := parseUint(arg, 16)
		if err != nil {
			return nil, fmt.Errorf("controller max_len: %w", err)
		}
		return openflow.ActionOutput{Port: openflow.PortController, MaxLen: uint16(v)}, nil
	case "mod_vlan_vid":
		v, err := parseUint(arg, 16)
		if err == nil && v > 4095 {
			err = fmt.Errorf("VLAN id must be 0..4095")
		}
		return openflow.ActionSetVlanVID{VlanVID: uint16(v)}, err
	case "mod_vlan_pcp":
		v, err := parseUint(arg, 8)
		if err == nil && v > 7 {
			err = fmt.Errorf("VLAN priority must be 0..7")
		}
		return openflow.ActionSetVlanPCP{VlanPCP: uint8(v)}, err
	case "mod_dl_src", "mod_dl_dst":
		mac, err := parseMAC(arg)
		if err != nil {
			return nil, err
		}
		if name == "mod_dl_src" {
			return openflow.ActionSetDlSrc{Addr: mac}, nil
		}
		return openflow.ActionSetDlDst{Addr: mac}, nil
	case "mod_nw_src", "mod_nw_dst":
		a, err := parseIPv4(arg)
		if err != nil {
			return nil, err
		}
		if name == "mod_nw_src" {
			return openflow.ActionSetNwSrc{Addr: a}, nil
		}
		return openflow.ActionSetNwDst{Addr: a}, nil
	case "mod_nw_tos":
		v, err := parseUint(arg, 8)
		if err == nil && v&3 != 0 {
			err = fmt.Errorf("nw_tos low 2 (ECN) bits must be 0")
		}
		return openflow.ActionSetNwTos{Tos: uint8(v)}, err
	case "mod_tp_src", "mod_tp_dst":
		v, err := parseUint(arg, 16)
		if err != nil {
			return nil, err
		}
		if name == "mod_tp_src" {
			return openflow.ActionSetTpSrc{Port: uint16(v)}, nil
		}
		return openflow.ActionSetTpDst{Port: uint16(v)}, nil
	case "enqueue":
		return parseEnqueue(arg)
	}
	return nil, fmt.Errorf("unknown action")
}

// parseEnqueue parses PORT:QUEUE (or PORT,QUEUE from the enqueue(P,Q) form).
func parseEnqueue(arg string) (openflow.Action, error) {
	portStr, queueStr, ok := strings.Cut(arg, ":")
	if !ok {
		portStr, queueStr, ok = strings.Cut(arg, ",")
	}
	if !ok {
		return nil, fmt.Errorf("enqueue needs PORT:QUEUE")
	}
	port, err := parsePort(strings.TrimSpace(portStr))
	if err != nil {
		return nil, err
	}
	q, err := parseUint(strings.TrimSpace(queueStr), 32)
	if err != nil {
		return nil, fmt.Errorf("queue id: %w", err)
	}
	return openflow.ActionEnqueue{Port: port, QueueID: uint32(q)}, nil
}
