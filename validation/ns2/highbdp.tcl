# highbdp.tcl: paper 002's high-BDP dumbbell (experiments/highbdp) in
# ns-2 2.35, the simulator the paper ran (Debian's ns2 package), for the
# side-by-side check in docs/high-bdp.md.
#
#   ns highbdp.tcl [key value ...]
#
#   bottleneck  L's rate, ns-2 syntax (100Mb, 622Mb, 2.5Gb, 10Gb)  [100Mb]
#   duration    simulated seconds                                 [60]
#   queue       L's DropTail limit, packets waiting (R1's output queue) [95]
#   access      every access link's rate, ns-2 syntax            [1Gb]
#   access_queue  every access link's DropTail limit, packets waiting [10000]
#                 (ours: 10000)
#
# Both limits count packets waiting, as our DropTail does. ns-2's
# DropTail drops an arrival when length + 1 >= limit_ (drop-tail.cc): it
# holds limit_ - 1 packets beside the one on the wire. So the script
# sets limit_ to the value given plus one, and ns-2's default limit_ 50
# is a queue of 49 in these terms.
#   starts      comma-separated start times (s) of the 10 long flows
#               (ours: Scenario.LongStarts, so both run one instance);
#               default flow 0 at 0, the others uniform in [0, 5)
#   delack      1: Agent/TCPSink/DelAck (every 2nd segment or 100 ms); 0: TCPSink
#   window      the senders' window_ (packets): the cap ns-2 puts on cwnd;
#               default 2 x L's BDP, as ours' endpoint buffers
#   ssthresh    initial ssthresh, packets                         [44]
#   util_every  seconds between the utilisation samples            [1]
#   trace_every seconds between flow 0's cwnd samples              [1]
#
# The scenario is ours (docs/high-bdp.md "The scenario"): 10 long bulk
# flows and 3 short transfers of 0.5, 1, 1.5 % of L's capacity x duration
# at 0.2, 0.4, 0.6 of the run, each on its own 2 ms access links (1 Gbit/s)
# to R1 -> L (53 ms) -> R2: base RTT 2 (2 2 + 53) = 114 ms.
# Agent/TCP/Newreno with 1460 B segments (1500 B packets with ns-2's 40 B
# TCP/IP header), windowInit_ 2, minrto_ 0.2. No web flows (as the ns-3
# program; the comparison runs ours with Web = 0). Prints one JSON object.

proc usage {msg} {
	puts stderr "highbdp.tcl: $msg"
	exit 2
}

array set opt {bottleneck 100Mb access 1Gb duration 60 queue 95 access_queue 10000 starts "" delack 1 window 0 ssthresh 44 util_every 1 trace_every 1 seed 1}
if {[llength $argv] % 2 != 0} { usage "want key value pairs, got: $argv" }
foreach {k v} $argv {
	if {![info exists opt($k)]} { usage "unknown key $k (want one of [lsort [array names opt]])" }
	set opt($k) $v
}

set ns [new Simulator]
# One fixed stream: the draws below are the only randomness (the default
# long-flow starts, ns-2's per-agent boot times).
ns-random $opt(seed)

set bw [bw_parse $opt(bottleneck)]
if {$bw <= 0} { usage "bottleneck $opt(bottleneck): want a positive rate" }
set acc [bw_parse $opt(access)]
if {$acc <= 0} { usage "access $opt(access): want a positive rate" }
set dur [expr {double($opt(duration))}]
if {$dur <= 0} { usage "duration $opt(duration): want > 0" }
set nLong 10
set nShort 3
set shortShare {0.005 0.01 0.015}
set shortStart {0.2 0.4 0.6}
set bdpPkts [expr {$bw * 0.114 / 8.0 / 1500.0}]
set wnd $opt(window)
if {$wnd <= 0} { set wnd [expr {int(max(2 * $bdpPkts, (4 << 20) / 1500))}] }

Agent/TCP set packetSize_ 1460
Agent/TCP set window_ $wnd
Agent/TCP set windowInit_ 2
Agent/TCP set minrto_ 0.2
Agent/TCPSink/DelAck set interval_ 0.1

set r1 [$ns node]
set r2 [$ns node]
$ns simplex-link $r1 $r2 $bw 53ms DropTail
$ns simplex-link $r2 $r1 $bw 53ms DropTail
$ns queue-limit $r1 $r2 [expr {$opt(queue) + 1}]
$ns queue-limit $r2 $r1 1000000

set starts {}
if {$opt(starts) ne ""} {
	set starts [split $opt(starts) ,]
	if {[llength $starts] != $nLong} { usage "starts: want $nLong values, got [llength $starts]" }
} else {
	set u [new RandomVariable/Uniform]
	$u set min_ 0
	$u set max_ 5
	lappend starts 0
	for {set i 1} {$i < $nLong} {incr i} { lappend starts [$u value] }
}

set tcps {}
for {set i 0} {$i < $nLong + $nShort} {incr i} {
	set s [$ns node]
	set d [$ns node]
	$ns duplex-link $s $r1 $acc 2ms DropTail
	$ns duplex-link $r2 $d $acc 2ms DropTail
	foreach {a b} [list $s $r1 $r1 $s $r2 $d $d $r2] { $ns queue-limit $a $b [expr {$opt(access_queue) + 1}] }
	set tcp [new Agent/TCP/Newreno]
	$tcp set fid_ $i
	if {$opt(delack)} { set sink [new Agent/TCPSink/DelAck] } else { set sink [new Agent/TCPSink] }
	$ns attach-agent $s $tcp
	$ns attach-agent $d $sink
	$ns connect $tcp $sink
	set ftp [new Application/FTP]
	$ftp attach-agent $tcp
	if {$i < $nLong} {
		set at [lindex $starts $i]
		$ns at $at "$tcp set ssthresh_ $opt(ssthresh); $ftp start"
	} else {
		set k [expr {$i - $nLong}]
		set at [expr {[lindex $shortStart $k] * $dur}]
		set bytes [expr {wide($bw / 8.0 * $dur * [lindex $shortShare $k])}]
		$ns at $at "$tcp set ssthresh_ $opt(ssthresh); $ftp send $bytes"
	}
	lappend tcps $tcp
}

# L's departures (bytes put on the wire: what our link counts, ns-2's
# headers included) and drops. The queue monitor's byte counter is a C
# int: it wraps after 2 GiB (under 2 s at 10 Gbit/s), so it is read every
# 0.1 s and the differences summed.
set qmon [$ns monitor-queue $r1 $r2 ""]
set total 0.0
set lastRaw 0
proc readBytes {} {
	global qmon total lastRaw
	set raw [$qmon set bdepartures_]
	set d [expr {$raw - $lastRaw}]
	if {$d < 0} { set d [expr {$d + 4294967296}] }
	set total [expr {$total + $d}]
	set lastRaw $raw
	return $total
}
proc tick {} {
	global ns
	readBytes
	$ns at [expr {[$ns now] + 0.1}] tick
}
$ns at 0 tick
set util {}
set lastB 0
proc sampleUtil {} {
	global ns util lastB opt bw dur
	set b [readBytes]
	set now [$ns now]
	if {$now > 0} { lappend util [format %.4f [expr {($b - $lastB) * 8.0 / ($bw * $opt(util_every))}]] }
	set lastB $b
	if {$now + $opt(util_every) <= $dur + 1e-9} { $ns at [expr {$now + $opt(util_every)}] sampleUtil }
}
set cwnd {}
set ssEnd -1
proc sampleCwnd {} {
	global ns tcps cwnd opt dur
	set t [lindex $tcps 0]
	lappend cwnd [format {[%.3f,%.1f,%d]} [$ns now] [$t set cwnd_] [$t set ssthresh_]]
	set now [$ns now]
	if {$now + $opt(trace_every) <= $dur + 1e-9} { $ns at [expr {$now + $opt(trace_every)}] sampleCwnd }
}
$ns at 0 sampleUtil
$ns at 0 sampleCwnd

proc finish {} {
	global ns qmon tcps bw dur opt util cwnd wnd
	set cap [expr {$bw / 8.0 * $dur}]
	set rx 0
	set timeouts 0
	set rexmit 0
	foreach t $tcps {
		# ack_ is the highest in-order packet acknowledged (from 0).
		set rx [expr {$rx + ([$t set ack_] + 1) * 1460.0}]
		set timeouts [expr {$timeouts + [$t set nrexmit_]}]
		set rexmit [expr {$rexmit + [$t set nrexmitpack_]}]
	}
	puts [format {{"simulator":"ns-2 2.35","bottleneck_bps":%.0f,"duration_s":%g,"queue":%d,"access_queue":%d,"window":%d,"utilisation":%.6f,"goodput":%.6f,"drops":%d,"timeouts":%d,"retransmitted":%d,"util":[%s],"cwnd":[%s]}} \
		$bw $dur $opt(queue) $opt(access_queue) $wnd [expr {[readBytes] / $cap}] [expr {$rx / $cap}] \
		[$qmon set pdrops_] $timeouts $rexmit [join $util ,] [join $cwnd ,]]
	exit 0
}
$ns at $dur finish
$ns run
