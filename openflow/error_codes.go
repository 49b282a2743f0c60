package openflow

import "fmt"

// ErrorType is ofp_error_type (OFPET_*).
type ErrorType uint16

// OpenFlow 1.0 error types.
const (
	ErrorTypeHelloFailed   ErrorType = 0 // OFPET_HELLO_FAILED
	ErrorTypeBadRequest    ErrorType = 1 // OFPET_BAD_REQUEST
	ErrorTypeBadAction     ErrorType = 2 // OFPET_BAD_ACTION
	ErrorTypeFlowModFailed ErrorType = 3 // OFPET_FLOW_MOD_FAILED
	ErrorTypePortModFailed ErrorType = 4 // OFPET_PORT_MOD_FAILED
	ErrorTypeQueueOpFailed ErrorType = 5 // OFPET_QUEUE_OP_FAILED
)

func (t ErrorType) String() string {
	return enumName(errorTypeNames[:], uint16(t), "ERROR_TYPE")
}

var errorTypeNames = [...]string{"HELLO_FAILED", "BAD_REQUEST", "BAD_ACTION", "FLOW_MOD_FAILED", "PORT_MOD_FAILED", "QUEUE_OP_FAILED"}

// HelloFailedCode is ofp_hello_failed_code.
type HelloFailedCode uint16

// OFPHFC_* codes.
const (
	HelloFailedIncompatible HelloFailedCode = 0 // OFPHFC_INCOMPATIBLE
	HelloFailedEPerm        HelloFailedCode = 1 // OFPHFC_EPERM
)

func (c HelloFailedCode) String() string {
	return enumName([]string{"INCOMPATIBLE", "EPERM"}, uint16(c), "CODE")
}

// BadRequestCode is ofp_bad_request_code.
type BadRequestCode uint16

// OFPBRC_* codes.
const (
	BadRequestBadVersion    BadRequestCode = 0 // OFPBRC_BAD_VERSION
	BadRequestBadType       BadRequestCode = 1 // OFPBRC_BAD_TYPE
	BadRequestBadStat       BadRequestCode = 2 // OFPBRC_BAD_STAT
	BadRequestBadVendor     BadRequestCode = 3 // OFPBRC_BAD_VENDOR
	BadRequestBadSubtype    BadRequestCode = 4 // OFPBRC_BAD_SUBTYPE
	BadRequestEPerm         BadRequestCode = 5 // OFPBRC_EPERM
	BadRequestBadLen        BadRequestCode = 6 // OFPBRC_BAD_LEN
	BadRequestBufferEmpty   BadRequestCode = 7 // OFPBRC_BUFFER_EMPTY
	BadRequestBufferUnknown BadRequestCode = 8 // OFPBRC_BUFFER_UNKNOWN
)

func (c BadRequestCode) String() string {
	return enumName([]string{"BAD_VERSION", "BAD_TYPE", "BAD_STAT", "BAD_VENDOR", "BAD_SUBTYPE", "EPERM", "BAD_LEN", "BUFFER_EMPTY", "BUFFER_UNKNOWN"}, uint16(c), "CODE")
}

// BadActionCode is ofp_bad_action_code.
type BadActionCode uint16

// OFPBAC_* codes.
const (
	BadActionBadType       BadActionCode = 0 // OFPBAC_BAD_TYPE
	BadActionBadLen        BadActionCode = 1 // OFPBAC_BAD_LEN
	BadActionBadVendor     BadActionCode = 2 // OFPBAC_BAD_VENDOR
	BadActionBadVendorType BadActionCode = 3 // OFPBAC_BAD_VENDOR_TYPE
	BadActionBadOutPort    BadActionCode = 4 // OFPBAC_BAD_OUT_PORT
	BadActionBadArgument   BadActionCode = 5 // OFPBAC_BAD_ARGUMENT
	BadActionEPerm         BadActionCode = 6 // OFPBAC_EPERM
	BadActionTooMany       BadActionCode = 7 // OFPBAC_TOO_MANY
	BadActionBadQueue      BadActionCode = 8 // OFPBAC_BAD_QUEUE
)

func (c BadActionCode) String() string {
	return enumName([]string{"BAD_TYPE", "BAD_LEN", "BAD_VENDOR", "BAD_VENDOR_TYPE", "BAD_OUT_PORT", "BAD_ARGUMENT", "EPERM", "TOO_MANY", "BAD_QUEUE"}, uint16(c), "CODE")
}

// FlowModFailedCode is ofp_flow_mod_failed_code.
type FlowModFailedCode uint16

// OFPFMFC_* codes.
const (
	FlowModFailedAllTablesFull   FlowModFailedCode = 0 // OFPFMFC_ALL_TABLES_FULL
	FlowModFailedOverlap         FlowModFailedCode = 1 // OFPFMFC_OVERLAP
	FlowModFailedEPerm           FlowModFailedCode = 2 // OFPFMFC_EPERM
	FlowModFailedBadEmergTimeout FlowModFailedCode = 3 // OFPFMFC_BAD_EMERG_TIMEOUT
	FlowModFailedBadCommand      FlowModFailedCode = 4 // OFPFMFC_BAD_COMMAND
	FlowModFailedUnsupported     FlowModFailedCode = 5 // OFPFMFC_UNSUPPORTED
)

func (c FlowModFailedCode) String() string {
	return enumName([]string{"ALL_TABLES_FULL", "OVERLAP", "EPERM", "BAD_EMERG_TIMEOUT", "BAD_COMMAND", "UNSUPPORTED"}, uint16(c), "CODE")
}

// PortModFailedCode is ofp_port_mod_failed_code.
type PortModFailedCode uint16

// OFPPMFC_* codes.
const (
	PortModFailedBadPort   PortModFailedCode = 0 // OFPPMFC_BAD_PORT
	PortModFailedBadHwAddr PortModFailedCode = 1 // OFPPMFC_BAD_HW_ADDR
)

func (c PortModFailedCode) String() string {
	return enumName([]string{"BAD_PORT", "BAD_HW_ADDR"}, uint16(c), "CODE")
}

// QueueOpFailedCode is ofp_queue_op_failed_code.
type QueueOpFailedCode uint16

// OFPQOFC_* codes.
const (
	QueueOpFailedBadPort  QueueOpFailedCode = 0 // OFPQOFC_BAD_PORT
	QueueOpFailedBadQueue QueueOpFailedCode = 1 // OFPQOFC_BAD_QUEUE
	QueueOpFailedEPerm    QueueOpFailedCode = 2 // OFPQOFC_EPERM
)

func (c QueueOpFailedCode) String() string {
	return enumName([]string{"BAD_PORT", "BAD_QUEUE", "EPERM"}, uint16(c), "CODE")
}

// CodeString names code in the enum that belongs to error type t, e.g.
// CodeString(ErrorTypeBadRequest, 6) == "BAD_LEN".
func CodeString(t ErrorType, code uint16) string {
	switch t {
	case ErrorTypeHelloFailed:
		return HelloFailedCode(code).String()
	case ErrorTypeBadRequest:
		return BadRequestCode(code).String()
	case ErrorTypeBadAction:
		return BadActionCode(code).String()
	case ErrorTypeFlowModFailed:
		return FlowModFailedCode(code).String()
	case ErrorTypePortModFailed:
		return PortModFailedCode(code).String()
	case ErrorTypeQueueOpFailed:
		return QueueOpFailedCode(code).String()
	}
	return fmt.Sprintf("CODE_%d", code)
}

// enumName returns names[v], or prefix_v when v is out of range.
func enumName(names []string, v uint16, prefix string) string {
	if int(v) < len(names) {
		return names[v]
	}
	return fmt.Sprintf("%s_%d", prefix, v)
}
