// Package agent models the switch's local CPU: the one processor that builds
// Packet-Ins for table misses, batches them towards the controller, and runs
// the OpenFlow agent's work (FLOW_MOD processing, TCAM writes and moves).
//
// The package is sans-I/O: it never touches a socket. Time comes from a
// clock.Clock; results leave through the Output interface and Job callbacks.
// The same Agent therefore runs inside the discrete-event simulator and in
// the live switch, and a modelled delay is the same number in both.
//
// # Pipeline
//
//	Miss ─► miss queue ─► CPU builds Packet-In (PacketInCost) ─► rate limiter
//	     (MissQueueLimit)                                        (controller_rate_limit,
//	                                                              controller_burst_limit)
//	     ─► batch ─► Output.SendPacketIns when BatchSize are queued
//	                 or when the periodic flush timer fires
//
//	Submit(Job) ─► job queue ─► CPU runs the job (Cost + Start()) ─► Done()
//	             (JobQueueLimit)
//
// # One CPU, two queues
//
// Packet-In builds and jobs occupy the same CPU, one at a time and without
// preemption: a job that is running (a long TCAM shift) delays every
// Packet-In build queued behind it, as on the real switch.
//
// When both queues hold work, Config.Scheduling decides which runs next:
//
//   - install_first (default): a queued job runs before a queued build.
//     Paper 000 Fig. 4 shows delays rising as a *staircase* at 1 000 and
//     5 000 pps: each batch of 25 is delivered together, ~105 ms after the
//     previous one. That needs the Flow-Mods of batch k to be installed
//     while the Packet-Ins of batch k+1.. are still being built. With one
//     FIFO in arrival order every Flow-Mod waits behind the whole miss
//     backlog (all 400 misses arrive within 80 ms at 5 000 pps), so all
//     packets are released together at the end (≈1.7 s) and no staircase
//     appears; TestSchedulingPolicyShapesTable1 shows both.
//     It is also a plausible reading of an agent's event loop: work that
//     frees the data path (a rule install releases waiting packets) is
//     served before new upcalls.
//   - fifo: one queue in arrival order, kept for comparison experiments.
//   - per_port_fair: one miss queue per ingress port, served round-robin;
//     a full queue drops the oldest miss of the longest port queue.
//   - syn_first: misses that open a TCP connection (SYN without ACK) are
//     built before all others; a SYN arriving at a full queue pushes out
//     the oldest other miss.
//   - rate_limited: install_first plus Open vSwitch's pinsched behind the
//     CPU (see Rate limiter).
//
// Each policy is a Scheduler (sched.go states the contract), one file per
// policy.
//
// # Batching
//
// The flush timer is periodic (period FlushPeriod, running from New) and a
// send triggered by the count restarts it. So:
//   - at low rates (10/100 pps, Fig. 4) the timer does the sending and each
//     Packet-In waits for the next tick, so its wait depends on its phase
//     against the timer: the periodic jitter of Fig. 4, which
//     CALIBRATION-NOTES reads as a periodic timer rather than one started
//     by the first queued entry;
//   - at high rates a full batch restarts the timer, so with FlushPeriod
//     above B·p (25 × 4.2 ms = 105 ms) every batch leaves full, as Table 1
//     reports (CALIBRATION-NOTES: "the flush timer must exceed ≈105 ms").
//     A timer that is never restarted would fire in the middle of batches
//     at any period and split them (TestFlushPeriodBound shows both).
//
// To let a simulation end, the timer is only armed while the batch is
// non-empty, for the next tick of the grid; that is exactly when a
// free-running timer would fire with something to send.
//
// # Rate limiter
//
// A token bucket of controller_burst_limit tokens refilled at
// controller_rate_limit per second. A built Packet-In goes on at once when
// a token is free and nothing is waiting; otherwise it waits, at most
// controller_burst_limit in all (OVS's limit too), and is released as
// tokens come back. With the rate_limited policy this is Open vSwitch's
// pinsched exactly (pinsched.go): per-ingress-port queues served
// round-robin, and a full queue drops the oldest Packet-In of the longest
// port queue (reason rate_limited); rate ≥ 100 and burst ≥ 25 as OVS's
// schema requires. With the other policies (when controller_rate_limit is
// set) it is the single FIFO the agent has always had, which drops the
// newcomer.
//
// # Concurrency
//
// State is guarded by a mutex, so the Agent is safe on the wall clock, where
// timers fire on their own goroutines. Output, DropHandler, Job.Start and
// Job.Done are called without the lock held, one at a time and in the order
// the agent produced them (an internal outbox drained by one caller at a
// time); they may call back into the Agent. On a clock.Sim everything runs
// inside the scheduler loop.
package agent
