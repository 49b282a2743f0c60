package agent

import "time"

// Job is work for the agent's CPU other than building Packet-Ins: processing
// a FLOW_MOD, writing and moving TCAM entries, answering a stats request.
type Job struct {
	// Kind labels the job in metrics ("flow_mod", "packet_out", ...). Keep
	// it to a small fixed set; empty means "job".
	Kind string
	// Cost is the fixed part of the CPU time (e.g. OpenFlow parsing).
	Cost time.Duration
	// Start, if set, is called when the CPU picks the job, so the state of
	// shared models at that moment counts (e.g. the TCAM insert computes how
	// many entries it shifts). It returns the extra CPU time; negative
	// counts as zero.
	Start func() time.Duration
	// Done, if set, is called when the job's CPU time has elapsed (e.g. the
	// rule becomes usable and waiting packets are forwarded). It is not
	// called for a job discarded by Stop.
	Done func()
}

func (j Job) kind() string {
	if j.Kind == "" {
		return "job"
	}
	return j.Kind
}
