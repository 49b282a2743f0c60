package live

import (
	"time"

	"github.com/pseudocong/pseudocong/probes"
)

// SummaryJSON is probes.Summary in seconds, for JSON output.
type SummaryJSON struct {
	Probes     int     `json:"probes"`
	Answered   int     `json:"answered"`
	Unanswered int     `json:"unanswered"`
	MinS       float64 `json:"min_s"`
	MeanS      float64 `json:"mean_s"`
	MedianS    float64 `json:"median_s"`
	P50S       float64 `json:"p50_s"`
	P90S       float64 `json:"p90_s"`
	P99S       float64 `json:"p99_s"`
	MaxS       float64 `json:"max_s"`
}

func summaryJSON(s probes.Summary) SummaryJSON {
	return SummaryJSON{
		Probes: s.Probes, Answered: s.Answered, Unanswered: s.Unanswered,
		MinS: s.Min.Seconds(), MeanS: s.Mean.Seconds(), MedianS: s.Median.Seconds(),
		P50S: s.P50.Seconds(), P90S: s.P90.Seconds(), P99S: s.P99.Seconds(), MaxS: s.Max.Seconds(),
	}
}

// Bin is one timer bin of a report: "[0s,5.8s)" and its count and share
// (unanswered probes count in the last bin, as in probes.CountResults).
type Bin struct {
	Label string  `json:"label"`
	Count int     `json:"count"`
	Share float64 `json:"share"`
}

func bins(rs []probes.Result, prof probes.TimerProfile, k probes.Kind) []Bin {
	edges := probes.Bins(prof, k)
	counts := probes.CountResults(rs, edges)
	shares := probes.Shares(counts)
	labels := probes.BinLabels(edges)
	out := make([]Bin, len(counts))
	for i := range counts {
		out[i] = Bin{Label: labels[i], Count: counts[i], Share: shares[i]}
	}
	return out
}

// ResultJSON is one probe's outcome.
type ResultJSON struct {
	Index    int     `json:"index"`
	Tuple    string  `json:"tuple"`
	Answered bool    `json:"answered"`
	RTTS     float64 `json:"rtt_s,omitempty"`
	// Retransmits: modelled (raw probes with Retransmit on) or, for TCP
	// probes, the kernel's count from TCP_INFO.
	Retransmits int    `json:"retransmits"`
	Error       string `json:"error,omitempty"`
}

// Report is the outcome of a probe run, ready for JSON.
type Report struct {
	Kind      string         `json:"kind"`
	Profile   string         `json:"profile"`
	Count     int            `json:"count"`
	RatePPS   float64        `json:"rate_pps"`
	Started   time.Time      `json:"started"`
	DurationS float64        `json:"duration_s"`
	Complete  bool           `json:"complete"` // every probe settled (not cut short)
	Summary   SummaryJSON    `json:"summary"`
	Bins      []Bin          `json:"bins"`
	Stats     *probes.Stats  `json:"stats,omitempty"`
	Endpoint  *EndpointStats `json:"endpoint,omitempty"`
	// TCP probes: how many results' kernel retransmission count differs
	// from the count the timer profile predicts from the handshake time.
	ProfileMismatches *int         `json:"profile_mismatches,omitempty"`
	Results           []ResultJSON `json:"results,omitempty"`
}
