package tcp

// Stats are one endpoint's counters, named as Linux's nstat names them
// (TcpExt* without the prefix, Tcp* for the MIB-II ones).
type Stats struct {
	ActiveOpens, PassiveOpens uint64
	InSegs, OutSegs           uint64
	RetransSegs               uint64 // every retransmitted segment, SYNs included
	TCPSynRetrans             uint64 // SYN and SYN-ACK retransmissions
	TCPTimeouts               uint64 // RTO expiries (data and handshake)
	TCPSpuriousRTOs           uint64 // timeouts F-RTO found spurious
	TCPLossUndo               uint64 // Loss-state reductions undone (F-RTO or Eifel)
	TCPFastRetrans            uint64 // retransmissions in Recovery
	TCPSlowStartRetrans       uint64 // retransmissions in Loss
	TCPRenoRecovery           uint64 // recoveries entered without SACK
	TCPSackRecovery           uint64 // recoveries entered with SACK
	TCPECNReductions          uint64 // CWR entered on ECE (not a Linux name: Linux has none)
	DelayedACKs               uint64 // delayed-ACK timer expiries that sent an ACK
	TCPAbortOnTimeout         uint64 // connections given up after the retries
	BytesSent                 uint64 // payload bytes sent, retransmissions included
	BytesRetrans              uint64 // payload bytes retransmitted
	BytesAcked                uint64 // payload bytes cumulatively acknowledged
	BytesReceived             uint64 // payload bytes delivered in order to the application
	SegsCE                    uint64 // data segments received with CE
}

// Counters lists the counters by name, in a fixed order, for reports.
func (s *Stats) Counters() []Counter {
	return []Counter{
		{"ActiveOpens", s.ActiveOpens}, {"PassiveOpens", s.PassiveOpens},
		{"InSegs", s.InSegs}, {"OutSegs", s.OutSegs}, {"RetransSegs", s.RetransSegs},
		{"TCPSynRetrans", s.TCPSynRetrans}, {"TCPTimeouts", s.TCPTimeouts},
		{"TCPSpuriousRTOs", s.TCPSpuriousRTOs}, {"TCPLossUndo", s.TCPLossUndo},
		{"TCPFastRetrans", s.TCPFastRetrans}, {"TCPSlowStartRetrans", s.TCPSlowStartRetrans},
		{"TCPRenoRecovery", s.TCPRenoRecovery}, {"TCPSackRecovery", s.TCPSackRecovery},
		{"TCPECNReductions", s.TCPECNReductions}, {"DelayedACKs", s.DelayedACKs},
		{"TCPAbortOnTimeout", s.TCPAbortOnTimeout},
		{"BytesSent", s.BytesSent}, {"BytesRetrans", s.BytesRetrans},
		{"BytesAcked", s.BytesAcked}, {"BytesReceived", s.BytesReceived}, {"SegsCE", s.SegsCE},
	}
}

// Counter is one named counter.
type Counter struct {
	Name  string
	Value uint64
}

// Add adds o's counters to s (for per-run totals).
func (s *Stats) Add(o *Stats) {
	s.ActiveOpens += o.ActiveOpens
	s.PassiveOpens += o.PassiveOpens
	s.InSegs += o.InSegs
	s.OutSegs += o.OutSegs
	s.RetransSegs += o.RetransSegs
	s.TCPSynRetrans += o.TCPSynRetrans
	s.TCPTimeouts += o.TCPTimeouts
	s.TCPSpuriousRTOs += o.TCPSpuriousRTOs
	s.TCPLossUndo += o.TCPLossUndo
	s.TCPFastRetrans += o.TCPFastRetrans
	s.TCPSlowStartRetrans += o.TCPSlowStartRetrans
	s.TCPRenoRecovery += o.TCPRenoRecovery
	s.TCPSackRecovery += o.TCPSackRecovery
	s.TCPECNReductions += o.TCPECNReductions
	s.DelayedACKs += o.DelayedACKs
	s.TCPAbortOnTimeout += o.TCPAbortOnTimeout
	s.BytesSent += o.BytesSent
	s.BytesRetrans += o.BytesRetrans
	s.BytesAcked += o.BytesAcked
	s.BytesReceived += o.BytesReceived
	s.SegsCE += o.SegsCE
}
