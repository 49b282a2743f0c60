package flowsyntax

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/pseudocong/pseudocong/openflow"
)

// Error is a syntax error, located by line (1-based; 0 when a single flow
// string was parsed) and by the offending token.
type Error struct {
	Line  int
	Token string
	Msg   string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %q: %s", e.Line, e.Token, e.Msg)
	}
	return fmt.Sprintf("%q: %s", e.Token, e.Msg)
}

// maxLineLen bounds one rule line; a longer line is an error, not an
// unbounded allocation.
const maxLineLen = 64 << 10

// Parse reads a rule file: one flow per line, blank lines and lines whose
// first non-blank character is '#' ignored. The first bad line stops the
// parse with an *Error carrying its line number.
func Parse(r io.Reader) ([]Flow, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxLineLen)
	var flows []Flow
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		f, err := ParseFlow(text)
		if err != nil {
			if e, ok := err.(*Error); ok {
				e.Line = line
			}
			return nil, err
		}
		flows = append(flows, f)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("flow rules after line %d: %w", line, err)
	}
	return flows, nil
}

// ParseFile reads a rule file from disk (see Parse).
func ParseFile(path string) ([]Flow, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("flow rules: %w", err)
	}
	defer f.Close()
	flows, err := Parse(f)
	if err != nil {
		return nil, fmt.Errorf("flow rules %s: %w", path, err)
	}
	return flows, nil
}

// ParseFlow parses one flow in ovs-ofctl syntax. Fields are separated by
// commas or blanks; "actions=" must come last and takes the rest of the
// string. Unset match fields are wildcarded; priority defaults to 32768.
func ParseFlow(s string) (Flow, error) {
	f := Flow{Match: openflow.MatchAll(), Priority: openflow.DefaultPriority}
	matchPart, actionPart, hasActions := cutActions(s)
	if !hasActions {
		return Flow{}, &Error{Token: s, Msg: "missing actions= (use actions=drop to drop)"}
	}
	p := matchParser{flow: &f}
	for _, tok := range splitFields(matchPart) {
		if err := p.field(tok); err != nil {
			return Flow{}, err
		}
	}
	if err := p.checkPrerequisites(); err != nil {
		return Flow{}, err
	}
	actions, err := parseActions(actionPart)
	if err != nil {
		return Flow{}, err
	}
	f.Actions = actions
	return f, nil
}

// cutActions splits s at the "actions=" keyword, which ovs-ofctl requires
// to be the last field because the action list itself contains commas.
func cutActions(s string) (match, actions string, ok bool) {
	lower := asciiLower(s) // same byte offsets as s, unlike strings.ToLower
	for i := 0; ; {
		j := strings.Index(lower[i:], "actions=")
		if j < 0 {
			return s, "", false
		}
		j += i
		// Must start a field: at the beginning or after a separator.
		if j == 0 || isSeparator(s[j-1]) {
			return s[:j], s[j+len("actions="):], true
		}
		i = j + 1
	}
}

// asciiLower lower-cases ASCII letters only, keeping every byte in place.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func isSeparator(c byte) bool { return c == ',' || c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// splitFields splits on commas and blanks, dropping empty pieces.
func splitFields(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r < 128 && isSeparator(byte(r)) })
}
