package experiments

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/pseudocong/pseudocong/probes"
)

// WriteCSV writes every sample of one experiment: one row per flow of
// every cell. Columns:
//
//	[switches,] base_load, rate_pps,      the cell (switches: the chain length, only
//	priority, flow                       for an experiment over chains) and the flow index
//	delivered                            1 if the packet (or its reply) arrived
//	delay_s | rtt_s                      one-way delay (packet_in) or RTT, seconds
//	retransmissions                      (RTT kinds) how many times the timer
//	                                     profile's stack would have resent first
//	gave_up                              (RTT kinds) 1 if it would have given up
func WriteCSV(w io.Writer, r *Result, expID string) error {
	cw := csv.NewWriter(w)
	var kind Kind
	chain := false
	for _, e := range r.Spec.Runs {
		if e.ID == expID {
			kind, chain = e.Kind, len(e.Chain) > 0
		}
	}
	head := cellColumns(chain, "flow", "delivered")
	if kind == KindPacketIn {
		head = append(head, "delay_s")
	} else {
		head = append(head, "rtt_s", "retransmissions", "gave_up")
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	pk := probes.KindSYN
	if kind == KindData {
		pk = probes.KindData
	}
	for _, c := range r.Cells {
		if c.Exp.ID != expID {
			continue
		}
		o := c.Outcome
		for i, d := range o.Delays {
			row := cellRow(c, chain, strconv.Itoa(i), boolDigit(o.Delivered[i]))
			val := ""
			if o.Delivered[i] {
				val = seconds(d)
			}
			row = append(row, val)
			if kind != KindPacketIn {
				n, failed := 0, true
				if o.Delivered[i] {
					n, failed = probes.Retransmissions(r.Timers, pk, d)
				} else {
					n = len(r.Timers.Retransmits(pk))
				}
				row = append(row, strconv.Itoa(n), boolDigit(failed))
			}
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteControllerCSV writes the controller delay Tc of every Packet-In of
// one experiment (paper Table 1's controller column).
func WriteControllerCSV(w io.Writer, r *Result, expID string) error {
	cw := csv.NewWriter(w)
	chain := false
	for _, e := range r.Spec.Runs {
		if e.ID == expID {
			chain = len(e.Chain) > 0
		}
	}
	if err := cw.Write(cellColumns(chain, "packet_in", "controller_s")); err != nil {
		return err
	}
	for _, c := range r.Cells {
		if c.Exp.ID != expID {
			continue
		}
		for i, t := range c.Outcome.ControllerTimes {
			if err := cw.Write(cellRow(c, chain, strconv.Itoa(i), seconds(t))); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// cellColumns are the columns naming a cell, then more.
func cellColumns(chain bool, more ...string) []string {
	var h []string
	if chain {
		h = append(h, "switches")
	}
	return append(append(h, "base_load", "rate_pps", "priority"), more...)
}

// cellRow is cell c's values for cellColumns, then more.
func cellRow(c Cell, chain bool, more ...string) []string {
	var r []string
	if chain {
		r = append(r, strconv.Itoa(c.Switches))
	}
	return append(append(r, strconv.Itoa(c.BaseLoad), rateString(c.Rate), c.Priority), more...)
}

func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 9, 64) }

func boolDigit(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// csvName is the file an experiment's samples go to.
func csvName(expID string) string { return fmt.Sprintf("%s.csv", expID) }
