package flowtable

import (
	"fmt"

	"github.com/pseudocong/pseudocong/openflow"
)

// Error is a FLOW_MOD refused by the table; it carries the OpenFlow ERROR
// the switch sends back.
type Error struct {
	Type openflow.ErrorType
	Code uint16
	Msg  string
}

func (e *Error) Error() string {
	return fmt.Sprintf("flowtable: %v/%s: %s", e.Type, openflow.CodeString(e.Type, e.Code), e.Msg)
}

func flowModError(code openflow.FlowModFailedCode, format string, args ...any) *Error {
	return &Error{Type: openflow.ErrorTypeFlowModFailed, Code: uint16(code), Msg: fmt.Sprintf(format, args...)}
}
