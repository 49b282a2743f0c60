package netsim

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// This file parses qdisc, loss and unit specs in tc's syntax, so the live
// switch's --port-qdisc flags and the simulator's configs say the same
// thing the same way:
//
//	tbf,rate=20mbit,burst=32kb,latency=50ms
//	droptail,limit=100        (packets)  droptail,limit=64kb  (bytes)
//	red,limit=400kb,min=30kb,max=90kb,probability=0.02,avpkt=1000,burst=55,bandwidth=20mbit,ecn
//	police,rate=10mbit,burst=16kb
//	prio(tbf,rate=10mbit,burst=16kb,latency=50ms;droptail,limit=100)
//
// prio(...) is a port with several queues (OpenFlow ENQUEUE's targets, a
// MultiQueue): its children, separated by ';', are queues 0, 1, ... in
// strict priority, queue 0 first, as tc's prio bands are. Children are any
// of the other kinds; a prio inside a prio is refused.
//
// Units are tc's (tc(8) "PARAMETERS"): rates in bit/s with bit, kbit,
// mbit, gbit, tbit (powers of 1000), kibit, mibit, gibit (powers of 1024),
// or bytes/s with bps, kbps, mbps, gbps; sizes in bytes, where b, k/kb,
// m/mb, g/gb are powers of 1024 as tc has them, and kbit, mbit, gbit are
// bits; times with s/sec, ms/msec, us/usec, ns. Rates and times need a
// unit: tc's bare-number defaults (bytes/s, µs) are too easy to misread.

// ParseRate parses a tc rate (e.g. "20mbit") into bits/s.
func ParseRate(s string) (int64, error) {
	num, unit := splitUnit(s)
	mult, ok := rateUnits[strings.ToLower(unit)]
	if !ok {
		if unit == "" {
			return 0, fmt.Errorf("rate %q: no unit (want e.g. 20mbit; units bit, kbit, mbit, gbit, tbit, kibit, mibit, gibit, or bps, kbps, mbps, gbps for bytes/s)", s)
		}
		return 0, fmt.Errorf("rate %q: unknown unit %q (want bit, kbit, mbit, gbit, tbit, kibit, mibit, gibit, bps, kbps, mbps, gbps)", s, unit)
	}
	v, err := parsePositive("rate", s, num)
	if err != nil {
		return 0, err
	}
	r := v * mult
	if r < 1 || r > math.MaxInt64/2 {
		return 0, fmt.Errorf("rate %q: out of range (1 bit/s .. 4e18 bit/s)", s)
	}
	return int64(math.Round(r)), nil
}

var rateUnits = map[string]float64{
	"bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9, "tbit": 1e12,
	"kibit": 1 << 10, "mibit": 1 << 20, "gibit": 1 << 30,
	"bps": 8, "kbps": 8e3, "mbps": 8e6, "gbps": 8e9,
}

// ParseSize parses a tc size (e.g. "32kb", "1514", "12kbit") into bytes.
// A bare number is bytes.
func ParseSize(s string) (int, error) {
	num, unit := splitUnit(s)
	mult, ok := sizeUnits[strings.ToLower(unit)]
	if !ok {
		return 0, fmt.Errorf("size %q: unknown unit %q (want b, k/kb, m/mb, g/gb (powers of 1024), kbit, mbit, gbit)", s, unit)
	}
	v, err := parsePositive("size", s, num)
	if err != nil {
		return 0, err
	}
	b := v * mult
	if b < 1 || b > maxBucketBytes {
		return 0, fmt.Errorf("size %q: out of range (1 .. %d bytes)", s, maxBucketBytes)
	}
	return int(math.Round(b)), nil
}

var sizeUnits = map[string]float64{
	"": 1, "b": 1,
	"k": 1 << 10, "kb": 1 << 10, "m": 1 << 20, "mb": 1 << 20, "g": 1 << 30, "gb": 1 << 30,
	"kbit": 1 << 10 / 8.0, "mbit": 1 << 20 / 8.0, "gbit": 1 << 30 / 8.0,
}

// ParseTime parses a tc time (e.g. "50ms", "1.5msec", "200us"). Zero is
// allowed ("0ms"); negative times are not.
func ParseTime(s string) (time.Duration, error) {
	num, unit := splitUnit(s)
	mult, ok := timeUnits[strings.ToLower(unit)]
	if !ok {
		if unit == "" {
			return 0, fmt.Errorf("time %q: no unit (want e.g. 15ms; units s, ms, us, ns)", s)
		}
		return 0, fmt.Errorf("time %q: unknown unit %q (want s/sec, ms/msec, us/usec, ns)", s, unit)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("time %q: want a non-negative number before the unit", s)
	}
	d := v * float64(mult)
	if d > float64(math.MaxInt64) {
		return 0, fmt.Errorf("time %q: out of range", s)
	}
	return time.Duration(math.Round(d)), nil
}

var timeUnits = map[string]time.Duration{
	"s": time.Second, "sec": time.Second, "secs": time.Second,
	"ms": time.Millisecond, "msec": time.Millisecond, "msecs": time.Millisecond,
	"us": time.Microsecond, "usec": time.Microsecond, "usecs": time.Microsecond, "µs": time.Microsecond,
	"ns": time.Nanosecond, "nsec": time.Nanosecond,
}

// ParseProb parses a probability as a fraction ("0.02") or a percentage
// ("2%").
func ParseProb(s string) (float64, error) {
	num, pct := strings.CutSuffix(strings.TrimSpace(s), "%")
	v, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("probability %q: want a fraction (0.02) or a percentage (2%%)", s)
	}
	if pct {
		v /= 100
	}
	if !(v >= 0 && v <= 1) {
		return 0, fmt.Errorf("probability %q: want 0..1 (0%%..100%%)", s)
	}
	return v, nil
}

// splitUnit splits "20mbit" into "20" and "mbit".
func splitUnit(s string) (num, unit string) {
	s = strings.TrimSpace(s)
	i := strings.IndexFunc(s, func(r rune) bool {
		return !(r >= '0' && r <= '9' || r == '.' || r == '-' || r == '+')
	})
	if i < 0 {
		return s, ""
	}
	return s[:i], s[i:]
}

func parsePositive(what, s, num string) (float64, error) {
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || !(v > 0) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%s %q: want a positive number before the unit", what, s)
	}
	return v, nil
}

// specArgs is a parsed "kind,key=value,flag,..." spec.
type specArgs struct {
	kind string
	vals map[string]string // flags have the value ""
	used map[string]bool
}

func parseSpec(s string) (*specArgs, error) {
	parts := strings.Split(strings.TrimSpace(s), ",")
	a := &specArgs{kind: strings.ToLower(strings.TrimSpace(parts[0])), vals: map[string]string{}, used: map[string]bool{}}
	if a.kind == "" {
		return nil, fmt.Errorf("empty spec: want a kind first (e.g. tbf,rate=20mbit,...)")
	}
	for _, p := range parts[1:] {
		p = strings.TrimSpace(p)
		if p == "" {
			return nil, fmt.Errorf("empty parameter (a stray comma?)")
		}
		k, v, _ := strings.Cut(p, "=")
		k = strings.ToLower(strings.TrimSpace(k))
		if _, dup := a.vals[k]; dup {
			return nil, fmt.Errorf("%s given twice", k)
		}
		a.vals[k] = strings.TrimSpace(v)
	}
	return a, nil
}

// get returns the value of the first of keys given (aliases), marking it
// used.
func (a *specArgs) get(keys ...string) (string, string, bool) {
	for _, k := range keys {
		if v, ok := a.vals[k]; ok {
			a.used[k] = true
			return k, v, true
		}
	}
	return "", "", false
}

func (a *specArgs) flag(k string) (bool, error) {
	v, ok := a.vals[k]
	if !ok {
		return false, nil
	}
	a.used[k] = true
	if v != "" {
		return false, fmt.Errorf("%s is a flag: give it without a value", k)
	}
	return true, nil
}

// unused refuses keys no parser asked for: a typo must not pass silently.
func (a *specArgs) unused(known string) error {
	for k := range a.vals {
		if !a.used[k] {
			return fmt.Errorf("unknown parameter %q for %s (want %s)", k, a.kind, known)
		}
	}
	return nil
}

func (a *specArgs) rate(req bool, keys ...string) (int64, error) {
	k, v, ok := a.get(keys...)
	if !ok {
		if req {
			return 0, fmt.Errorf("%s needs %s=RATE", a.kind, keys[0])
		}
		return 0, nil
	}
	r, err := ParseRate(v)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", k, err)
	}
	return r, nil
}

func (a *specArgs) size(req bool, keys ...string) (int, error) {
	k, v, ok := a.get(keys...)
	if !ok {
		if req {
			return 0, fmt.Errorf("%s needs %s=SIZE", a.kind, keys[0])
		}
		return 0, nil
	}
	n, err := ParseSize(v)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", k, err)
	}
	return n, nil
}

func (a *specArgs) duration(keys ...string) (time.Duration, error) {
	k, v, ok := a.get(keys...)
	if !ok {
		return 0, nil
	}
	d, err := ParseTime(v)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", k, err)
	}
	return d, nil
}

func (a *specArgs) prob(keys ...string) (float64, bool, error) {
	k, v, ok := a.get(keys...)
	if !ok {
		return 0, false, nil
	}
	p, err := ParseProb(v)
	if err != nil {
		return 0, false, fmt.Errorf("%s: %w", k, err)
	}
	return p, true, nil
}

func (a *specArgs) count(keys ...string) (uint64, error) {
	k, v, ok := a.get(keys...)
	if !ok {
		return 0, nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s %q: want a non-negative integer", k, v)
	}
	return n, nil
}

// DefaultDropTailLimit is a droptail's limit when the spec gives none:
// Linux's default txqueuelen, which pfifo takes as its limit.
const DefaultDropTailLimit = 1000

// ParseQdisc makes a qdisc from a tc-style spec (see the file comment):
//
//	droptail|pfifo|bfifo[,limit=N|SIZE]   N packets, or SIZE with a unit in bytes
//	tbf,rate=R,burst=S[,latency=T|limit=S]
//	red,limit=S,min=S,max=S[,probability=P][,avpkt=S][,burst=N][,bandwidth=R][,ecn][,harddrop][,seed=N]
//	police,rate=R,burst=S[,limit=N]       a policer before a FIFO of N packets (default 1000)
//	prio(Q0;Q1;...)                       queues 0, 1, ... (each one of the above), strict priority, 0 first
//
// Errors name the parameter (and, in a prio, the queue) and the bad part.
func ParseQdisc(s string) (Qdisc, error) {
	q, err := parseQdisc(s)
	if err != nil {
		return nil, fmt.Errorf("qdisc %q: %w", s, err)
	}
	return q, nil
}

func parseQdisc(s string) (Qdisc, error) {
	t := strings.TrimSpace(s)
	if kind, _, ok := strings.Cut(t, "("); ok && strings.EqualFold(strings.TrimSpace(kind), "prio") {
		return parsePrio(t)
	}
	if strings.ContainsAny(t, "();") {
		return nil, fmt.Errorf("unexpected '(', ')' or ';' (only prio(Q0;Q1;...) takes a list of queues)")
	}
	a, err := parseSpec(s)
	if err != nil {
		return nil, err
	}
	var q Qdisc
	var known string
	switch a.kind {
	case "droptail", "pfifo", "bfifo":
		known = "limit"
		q, err = parseDropTail(a)
	case "tbf":
		known = "rate, burst, latency, limit"
		q, err = parseTBF(a)
	case "red":
		known = "limit, min, max, probability, avpkt, burst, bandwidth, ecn, harddrop, seed"
		q, err = parseRED(a)
	case "police", "policer":
		known = "rate, burst, limit"
		q, err = parsePolice(a)
	case "prio":
		return nil, fmt.Errorf("prio needs its queues in parentheses: prio(Q0;Q1;...), e.g. prio(tbf,rate=10mbit,burst=16kb,latency=50ms;droptail)")
	default:
		return nil, fmt.Errorf("unknown kind %q (want droptail, pfifo, bfifo, tbf, red, police, prio(...))", a.kind)
	}
	if err != nil {
		return nil, err
	}
	if err := a.unused(known); err != nil {
		return nil, err
	}
	return q, nil
}

// MaxQueues bounds a prio's queues: enough for any experiment, and a
// typo such as a stray ';' list cannot make thousands.
const MaxQueues = 64

// parsePrio parses "prio(Q0;Q1;...)" into a MultiQueue.
func parsePrio(t string) (Qdisc, error) {
	open := strings.Index(t, "(")
	if !strings.HasSuffix(t, ")") {
		return nil, fmt.Errorf("prio: want prio(Q0;Q1;...) ending in ')'")
	}
	body := t[open+1 : len(t)-1]
	if strings.ContainsAny(body, "()") {
		return nil, fmt.Errorf("prio: a queue cannot be a prio itself")
	}
	parts := strings.Split(body, ";")
	if len(parts) > MaxQueues {
		return nil, fmt.Errorf("prio: %d queues: at most %d", len(parts), MaxQueues)
	}
	children := make([]Qdisc, 0, len(parts))
	for i, p := range parts {
		if strings.TrimSpace(p) == "" {
			return nil, fmt.Errorf("prio: queue %d is empty (want a qdisc such as droptail or tbf,rate=...)", i)
		}
		q, err := parseQdisc(p)
		if err != nil {
			return nil, fmt.Errorf("prio queue %d: %w", i, err)
		}
		children = append(children, q)
	}
	return NewMultiQueue(children...)
}

func parseDropTail(a *specArgs) (Qdisc, error) {
	_, v, ok := a.get("limit")
	if !ok {
		if a.kind == "bfifo" {
			return nil, fmt.Errorf("bfifo needs limit=SIZE")
		}
		return NewDropTail(DefaultDropTailLimit, 0)
	}
	// A bare number is packets (pfifo), one with a unit bytes (bfifo);
	// bfifo takes a bare number as bytes, as tc does.
	if _, unit := splitUnit(v); unit == "" && a.kind != "bfifo" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("limit %q: want a positive number of packets, or a size such as 64kb", v)
		}
		return NewDropTail(n, 0)
	}
	n, err := ParseSize(v)
	if err != nil {
		return nil, fmt.Errorf("limit: %w", err)
	}
	return NewDropTail(0, n)
}

func parseTBF(a *specArgs) (Qdisc, error) {
	var c TBFConfig
	var err error
	if c.Rate, err = a.rate(true, "rate"); err != nil {
		return nil, err
	}
	if c.Burst, err = a.size(true, "burst", "buffer", "maxburst"); err != nil {
		return nil, err
	}
	if c.Limit, err = a.size(false, "limit"); err != nil {
		return nil, err
	}
	if c.Latency, err = a.duration("latency"); err != nil {
		return nil, err
	}
	if (c.Limit == 0) == (c.Latency == 0) {
		return nil, fmt.Errorf("tbf needs exactly one of latency=TIME and limit=SIZE")
	}
	return NewTBF(c)
}

func parseRED(a *specArgs) (Qdisc, error) {
	var c REDConfig
	var err error
	if c.Limit, err = a.size(true, "limit"); err != nil {
		return nil, err
	}
	if c.Min, err = a.size(true, "min"); err != nil {
		return nil, err
	}
	if c.Max, err = a.size(true, "max"); err != nil {
		return nil, err
	}
	if c.MaxP, _, err = a.prob("probability"); err != nil {
		return nil, err
	}
	if c.Avpkt, err = a.size(false, "avpkt"); err != nil {
		return nil, err
	}
	if c.Avpkt == 0 {
		c.Avpkt = 1000 // tc's default
	}
	burst, err := a.count("burst")
	if err != nil {
		return nil, err
	}
	c.Burst = int(min(burst, math.MaxInt32))
	if c.Bandwidth, err = a.rate(false, "bandwidth"); err != nil {
		return nil, err
	}
	if c.ECN, err = a.flag("ecn"); err != nil {
		return nil, err
	}
	if c.HardDrop, err = a.flag("harddrop"); err != nil {
		return nil, err
	}
	if c.Seed, err = a.count("seed"); err != nil {
		return nil, err
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	return NewRED(c)
}

func parsePolice(a *specArgs) (Qdisc, error) {
	rate, err := a.rate(true, "rate")
	if err != nil {
		return nil, err
	}
	burst, err := a.size(true, "burst", "buffer", "maxburst")
	if err != nil {
		return nil, err
	}
	limit, err := a.count("limit")
	if err != nil {
		return nil, err
	}
	if limit == 0 {
		limit = DefaultDropTailLimit
	}
	pl, err := NewPolicer(rate, burst)
	if err != nil {
		return nil, err
	}
	// The FIFO behind the policer never holds a packet for long (nothing
	// shapes it); it is there because a link pulls from a queue.
	child, err := NewDropTail(int(min(limit, math.MaxInt32)), 0)
	if err != nil {
		return nil, err
	}
	return &Policed{Policer: pl, Child: child}, nil
}

// ParseLoss makes a loss model from a spec:
//
//	1%  or  0.01                                  Bernoulli
//	bernoulli,p=1%[,seed=N]
//	gemodel,p=P[,r=R][,1-h=P][,1-k=P][,seed=N]    Gilbert–Elliott, as netem's "loss gemodel p r 1-h 1-k"
//
// For gemodel, r defaults to 1−p, 1-h (loss in Bad) to 100 % and 1-k (loss
// in Good) to 0, as in netem. seed defaults to 1.
func ParseLoss(s string) (LossModel, error) {
	m, err := parseLoss(s)
	if err != nil {
		return nil, fmt.Errorf("loss %q: %w", s, err)
	}
	return m, nil
}

func parseLoss(s string) (LossModel, error) {
	t := strings.TrimSpace(s)
	if t != "" && (t[0] >= '0' && t[0] <= '9' || t[0] == '.') {
		p, err := ParseProb(t)
		if err != nil {
			return nil, err
		}
		return NewBernoulli(p, 1)
	}
	a, err := parseSpec(s)
	if err != nil {
		return nil, err
	}
	seed, err := a.count("seed")
	if err != nil {
		return nil, err
	}
	if seed == 0 {
		seed = 1
	}
	switch a.kind {
	case "bernoulli", "random":
		p, ok, err := a.prob("p")
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("bernoulli needs p=PROB")
		}
		if err := a.unused("p, seed"); err != nil {
			return nil, err
		}
		return NewBernoulli(p, seed)
	case "gemodel", "gilbert-elliott":
		c := GilbertElliottConfig{Seed: seed, LossBad: 1}
		var ok bool
		if c.P, ok, err = a.prob("p"); err != nil {
			return nil, err
		} else if !ok {
			return nil, fmt.Errorf("gemodel needs p=PROB")
		}
		if c.R, ok, err = a.prob("r"); err != nil {
			return nil, err
		} else if !ok {
			c.R = 1 - c.P
		}
		if v, ok, err := a.prob("1-h"); err != nil {
			return nil, err
		} else if ok {
			c.LossBad = v
		}
		if c.LossGood, _, err = a.prob("1-k"); err != nil {
			return nil, err
		}
		if err := a.unused("p, r, 1-h, 1-k, seed"); err != nil {
			return nil, err
		}
		return NewGilbertElliott(c)
	default:
		return nil, fmt.Errorf("unknown model %q (want a probability such as 1%%, bernoulli,p=..., or gemodel,p=...)", a.kind)
	}
}

// QdiscRate is the rate a qdisc shapes or polices to, if it does: what
// bounds the bytes a delay line behind it can hold.
func QdiscRate(q Qdisc) (int64, bool) {
	switch q := q.(type) {
	case *TBF:
		return q.b.rate, true
	case *Policed:
		return q.b.rate, true
	case *MultiQueue:
		// Shaped only if every queue is: then at most the sum leaves.
		var sum int64
		for _, c := range q.children {
			r, ok := QdiscRate(c)
			if !ok {
				return 0, false
			}
			sum += r
		}
		return sum, true
	}
	return 0, false
}
