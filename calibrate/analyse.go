package calibrate

import (
	"fmt"
	"time"
)

// Fits is every model fitted to one Result. A nil pointer (or an Err
// string) means the run did not measure enough for that part.
type Fits struct {
	Echo      DelayStats
	Hit       DelayStats
	PacketOut DelayStats
	Burst     *BurstFit
	BurstErr  string
	Flush     *FlushFit
	FlushErr  string
	Queue     *QueueFit
	Cache     *CacheFit
	Insert    *InsertFit
	InsertErr string
	Delete    *DeleteFit
	DeleteErr string
	// Upcall is the upcall section (nil: not fitted, UpcallErr says why).
	Upcall    *UpcallFit
	UpcallErr string
	// Activation is install.activation_delay (nil: too few batches).
	Activation *ActivationFit
	// Capacity is the fitted fast-table (TCAM) size in rules, and how it
	// was found: "cache" (Tango probing), "table-full", or "lower-bound"
	// (the run never reached it).
	Capacity    int
	CapacityHow string
	// Backing is the rules the switch holds beyond the fast table
	// (TABLE_FULL minus Capacity); 0 when never reached.
	Backing int
	// SwapInUpcall: the slow path of a cache miss costs about a Packet-In
	// build more than the insert alone.
	SwapInUpcall bool
	SlowPath     DelayStats
}

// Analyse fits every model to the measurements. It is pure.
func Analyse(res *Result) Fits {
	var f Fits
	f.Echo = Summarise(res.Echo)
	f.Hit = Summarise(res.Hit)
	f.PacketOut = Summarise(res.PacketOut)
	if b, err := FitBurst(res.Burst); err == nil {
		f.Burst = &b
	} else {
		f.BurstErr = err.Error()
	}
	var p time.Duration
	if f.Burst != nil {
		p = f.Burst.PacketInCost
	}
	if fl, err := FitFlush(res.Isolated, res.IsolatedAt, p, f.Echo.Median/2); err == nil {
		f.Flush = &fl
	} else {
		f.FlushErr = err.Error()
	}
	// Regular groups but lone misses held no longer than a read: the
	// switch reads in bursts, it does not batch (MaxReadBurstWait).
	if f.Burst != nil && f.Burst.BatchSize > 1 && f.Flush != nil && !f.Flush.Periodic && f.Flush.Period < MaxReadBurstWait {
		if u, err := Unbatch(*f.Burst, res.Burst); err == nil {
			f.Burst = &u
			p = u.PacketInCost
			if fl, err := FitFlush(res.Isolated, res.IsolatedAt, p, f.Echo.Median/2); err == nil {
				f.Flush = &fl
			}
		}
	}
	f.Upcall, f.UpcallErr = fitUpcall(res, f, p)
	if res.QueueSent > 0 {
		q := FitQueue(res.QueueSent, res.QueueGot, res.QueueSendDur, p)
		f.Queue = &q
	}
	// Capacity: the cache split first (it sees the fast table itself),
	// then ALL_TABLES_FULL, else the largest table the run reached.
	maxOcc := 0
	for _, b := range res.Batches {
		for _, in := range b.Inserts {
			maxOcc = max(maxOcc, in.Occ+1)
		}
	}
	if len(res.Cache) > 0 {
		c := FitCache(res.Cache)
		f.Cache = &c
		if c.IsCache {
			// The fast table also holds the switch's own rules. Calibrate's
			// guard rule, inserted first, is the least recently used rule
			// once the fill overflows, so it is not counted (on our switch
			// it is evicted; a switch that keeps it has one slot more).
			f.Capacity, f.CapacityHow = c.Fast+res.Foreign, "cache"
			f.SlowPath = c.SlowDelay
		}
	}
	if f.CapacityHow == "" && res.TableFull > 0 {
		f.Capacity, f.CapacityHow = res.TableFull, "table-full"
	}
	if f.CapacityHow == "" {
		f.Capacity, f.CapacityHow = maxOcc, "lower-bound"
	}
	if res.TableFull > 0 && f.CapacityHow == "cache" {
		f.Backing = res.TableFull - f.Capacity
	}
	fitCap := f.Capacity
	if f.CapacityHow == "lower-bound" {
		fitCap = 0 // no slow-path window without a known end of table
	}
	if in, err := FitInserts(res.Batches, fitCap); err == nil {
		f.Insert = &in
	} else {
		f.InsertErr = err.Error()
	}
	if a, ok := FitActivation(res.Batches, f.Hit, f.Echo, res.ProbeInterval); ok {
		f.Activation = &a
	}
	if d, err := FitDeletes(res.Deletes); err == nil {
		f.Delete = &d
	} else {
		f.DeleteErr = err.Error()
	}
	// A swap-in that costs a Packet-In build beyond a full-table insert
	// (evict + insert) means the packet went up to the CPU first.
	if f.Cache != nil && f.Cache.IsCache && f.Insert != nil && f.Burst != nil {
		insert := f.Insert.PerInsert(Insert{Occ: f.Capacity - 1, Lower: f.Capacity - 1, Higher: f.Capacity - 1})
		if f.Delete != nil {
			insert += f.Delete.CInvalidate
		}
		extra := f.SlowPath.Median - insert
		f.SwapInUpcall = extra > f.Burst.PacketInCost/2
	}
	return f
}

// fitUpcall fits the upcall latency from the paced and isolated misses
// of a switch that sends each Packet-In at once; a batching switch's miss
// delay is its flush timer's (agent.flush_period), not an upcall's.
func fitUpcall(res *Result, f Fits, p time.Duration) (*UpcallFit, string) {
	if f.Burst == nil {
		return nil, "no Packet-In rate fit"
	}
	if f.Burst.BatchSize > 1 {
		return nil, "the switch batches Packet-Ins: the miss delay is its flush timer's"
	}
	misses := append([]PacedMiss(nil), res.Paced...)
	for i, d := range res.Isolated {
		if i < len(res.IsolatedGap) {
			misses = append(misses, PacedMiss{Level: -1, Gap: res.IsolatedGap[i], Delay: d})
		}
	}
	u, err := FitUpcall(misses, f.Echo.Median/2+p)
	if err != nil {
		return nil, err.Error()
	}
	return &u, ""
}

// String is a one-paragraph summary for the terminal.
func (f Fits) String() string {
	s := ""
	if f.Burst != nil {
		s += fmt.Sprintf("Packet-In: %.0f/s (p = %v), batches of %d; ", f.Burst.Rate, f.Burst.PacketInCost.Round(time.Microsecond), f.Burst.BatchSize)
		if f.Burst.ReadBurst > 1 {
			s += fmt.Sprintf("read bursts of %d, not batches; ", f.Burst.ReadBurst)
		}
	}
	if f.Flush != nil {
		kind := "one-shot"
		if f.Flush.Periodic {
			kind = "periodic"
		}
		s += fmt.Sprintf("flush %s %v; ", kind, f.Flush.Period.Round(time.Millisecond))
	}
	if f.Queue != nil {
		s += fmt.Sprintf("miss queue %d (%d dropped); ", f.Queue.Limit, f.Queue.Dropped)
	}
	if u := f.Upcall; u != nil {
		if u.RateDependent {
			s += fmt.Sprintf("upcall %v busy, %v idle (τ %v); ", u.Latency.Round(time.Microsecond), u.IdleLatency.Round(time.Microsecond), u.TimeConstant.Round(100*time.Microsecond))
		} else {
			s += fmt.Sprintf("upcall %v; ", u.Latency.Round(time.Microsecond))
		}
	}
	s += fmt.Sprintf("capacity %d (%s); ", f.Capacity, f.CapacityHow)
	if f.Insert != nil {
		s += fmt.Sprintf("layout %s, c_write %v, c_move %v, slow window %d at %v; ", f.Insert.Layout,
			f.Insert.CWrite.Round(time.Microsecond), f.Insert.CMove.Round(10*time.Nanosecond), f.Insert.SlowWindow, f.Insert.CSlow.Round(100*time.Nanosecond))
	}
	s += fmt.Sprintf("hit delay median %v", f.Hit.Median.Round(time.Microsecond))
	return s
}
