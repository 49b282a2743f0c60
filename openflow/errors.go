package openflow

import (
	"errors"
	"fmt"
)

// VersionError reports a message whose ofp_header.version is not 0x01.
type VersionError struct {
	Got uint8
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("openflow: unsupported version 0x%02x (want 0x%02x)", e.Got, Version)
}

// UnknownTypeError reports an ofp_header.type that OpenFlow 1.0 does not define.
type UnknownTypeError struct {
	Type Type
}

func (e *UnknownTypeError) Error() string {
	return fmt.Sprintf("openflow: unknown message type %d", uint8(e.Type))
}

// TypeMismatchError reports a DecodeFromBytes call on a struct whose type
// differs from the ofp_header.type of the bytes.
type TypeMismatchError struct {
	Want, Got Type
}

func (e *TypeMismatchError) Error() string {
	return fmt.Sprintf("openflow: message type %v decoded as %v", e.Got, e.Want)
}

// UnknownActionError reports an ofp_action_type this package does not know.
type UnknownActionError struct {
	Type ActionType
}

func (e *UnknownActionError) Error() string {
	return fmt.Sprintf("openflow: unknown action type %d", uint16(e.Type))
}

// ActionError locates a bad action inside an action list. Err is a
// *LengthError or *UnknownActionError.
type ActionError struct {
	// Offset is the byte offset of the action inside the action list.
	Offset int
	Err    error
}

func (e *ActionError) Error() string {
	return fmt.Sprintf("openflow: action at offset %d: %v", e.Offset, e.Err)
}

func (e *ActionError) Unwrap() error { return e.Err }

// UnknownStatsTypeError reports an ofp_stats_types value OpenFlow 1.0 does
// not define.
type UnknownStatsTypeError struct {
	Type StatsType
}

func (e *UnknownStatsTypeError) Error() string {
	return fmt.Sprintf("openflow: unknown stats type %d", uint16(e.Type))
}

// BadValueError reports a field whose value is not allowed (for example an
// unknown queue property).
type BadValueError struct {
	What  string
	Value uint64
}

func (e *BadValueError) Error() string {
	return fmt.Sprintf("openflow: %s: bad value %d", e.What, e.Value)
}

// ErrorCodeFor maps a decode error from this package to the OpenFlow ERROR
// (type, code) a switch should answer with, so that a bad message from a peer
// becomes an ERROR reply instead of a dropped connection. Errors it does not
// recognise map to BAD_REQUEST/EPERM.
func ErrorCodeFor(err error) (ErrorType, uint16) {
	var (
		ve  *VersionError
		ute *UnknownTypeError
		ae  *ActionError
		uae *UnknownActionError
		use *UnknownStatsTypeError
		le  *LengthError
	)
	switch {
	case errors.As(err, &ve):
		return ErrorTypeBadRequest, uint16(BadRequestBadVersion)
	case errors.As(err, &ute):
		return ErrorTypeBadRequest, uint16(BadRequestBadType)
	case errors.As(err, &uae):
		return ErrorTypeBadAction, uint16(BadActionBadType)
	case errors.As(err, &ae):
		return ErrorTypeBadAction, uint16(BadActionBadLen)
	case errors.As(err, &use):
		return ErrorTypeBadRequest, uint16(BadRequestBadStat)
	case errors.As(err, &le):
		return ErrorTypeBadRequest, uint16(BadRequestBadLen)
	}
	return ErrorTypeBadRequest, uint16(BadRequestEPerm)
}

// lengthErr builds the *LengthError every decoder returns.
func lengthErr(what string, want, got int) error {
	return &LengthError{What: what, Want: want, Got: got}
}
