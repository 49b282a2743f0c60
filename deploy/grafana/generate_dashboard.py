#!/usr/bin/env python3
"""Regenerates dashboards/pseudocong.json (Grafana 9+ schema).

Edit the panel list here, run `python3 deploy/grafana/generate_dashboard.py`,
and commit both files. deploy/dashboard_test.go checks that every metric the
dashboard references is registered by the code.
"""
import json
import os

DS = {"type": "prometheus", "uid": "pseudocong-prom"}
panels = []
next_id = [1]


def q(expr, legend):
    return {"datasource": DS, "expr": expr, "legendFormat": legend, "refId": chr(ord("A") + 0)}


def quantiles(metric, by="", window="1m", qs=(0.5, 0.9, 0.99)):
    grp = "le" + ("," + by if by else "")
    out = []
    for i, qq in enumerate(qs):
        legend = "p%d" % round(qq * 100) + (" {{%s}}" % by if by else "")
        t = q('histogram_quantile(%g, sum by (%s) (rate(%s_bucket[%s])))' % (qq, grp, metric, window), legend)
        t["refId"] = chr(ord("A") + i)
        out.append(t)
    return out


def panel(title, targets, unit="short", kind="timeseries", w=12, h=8, desc="", stack=False, maxv=None):
    pid = next_id[0]
    next_id[0] += 1
    for i, t in enumerate(targets):
        t["refId"] = chr(ord("A") + i)
    defaults = {"unit": unit}
    if maxv is not None:
        defaults["max"] = maxv
        defaults["min"] = 0
    p = {
        "id": pid, "type": kind, "title": title, "description": desc, "datasource": DS,
        "targets": targets,
        "fieldConfig": {"defaults": defaults, "overrides": []},
        "options": {"legend": {"displayMode": "list", "placement": "bottom", "showLegend": True},
                    "tooltip": {"mode": "multi", "sort": "none"}},
    }
    if stack:
        p["fieldConfig"]["defaults"]["custom"] = {"stacking": {"mode": "normal", "group": "A"}, "fillOpacity": 60}
    panels.append((p, w, h))


def row(title):
    pid = next_id[0]
    next_id[0] += 1
    panels.append(({"id": pid, "type": "row", "title": title, "collapsed": False, "panels": []}, 24, 1))


row("Controller")
panel("Packet-In → FLOW_MOD latency (controller)",
      quantiles("pseudocong_controller_packet_in_handling_seconds"), unit="s",
      desc="Time from receiving a PACKET_IN to sending the FLOW_MOD it caused, on the controller's clock.")
panel("Controller messages and FLOW_MODs",
      [q('sum by (direction, type) (rate(pseudocong_controller_messages_total[1m]))', "{{direction}} {{type}}"),
       q('rate(pseudocong_controller_flow_mods_total[1m])', "FLOW_MODs sent")],
      unit="ops", desc="OpenFlow messages per second by direction and type.")

row("Switch local CPU (agent)")
panel("Agent queue depth", [q('pseudocong_agent_queue_depth', "{{queue}}")],
      desc="Entries waiting in each local-CPU queue (miss, job, rate_limit, batch).")
panel("Packet-In batch size",
      quantiles("pseudocong_agent_packet_in_batch_size", qs=(0.5, 0.99)) +
      [q('sum by (trigger) (rate(pseudocong_agent_packet_in_batches_total[1m]))', "batches/s ({{trigger}})")],
      desc="Packet-Ins per batch sent to the controller (the paper saw batches of 25 at 5 000 pps) and what flushed them.")
panel("Switch-side Packet-In latency (miss → batch sent)",
      quantiles("pseudocong_agent_packet_in_latency_seconds"), unit="s",
      desc="Time a table miss waits in the local CPU before its Packet-In leaves (modelled seconds; wall time in a live run).")
panel("Agent CPU busy", [q('sum by (work) (rate(pseudocong_agent_cpu_busy_seconds_total[1m]))', "{{work}}")],
      unit="percentunit", stack=True, desc="Share of the modelled local CPU spent per kind of work.")

row("TCAM and data plane")
panel("TCAM insert latency", quantiles("pseudocong_tcam_insert_latency_seconds", by="cause"), unit="s",
      desc="Local-CPU driver time of one TCAM insert including its entry moves, by cause (flow_mod, swap_in).")
panel("TCAM occupancy",
      [q('pseudocong_tcam_entries', "entries"), q('pseudocong_tcam_capacity_entries', "capacity"),
       q('pseudocong_dataplane_backing_entries', "backing table")],
      desc="Entries in the TCAM against its capacity, and rules held only in the backing table.")
panel("TCAM entry moves", [q('rate(pseudocong_tcam_entries_moved_total[1m])', "moves/s"),
                           q('rate(pseudocong_tcam_writes_total[1m])', "writes/s"),
                           q('rate(pseudocong_dataplane_swap_ins_total[1m])', "swap-ins/s"),
                           q('rate(pseudocong_dataplane_evictions_total[1m])', "evictions/s")],
      unit="ops", desc="Entries relocated by priority-ordered inserts (the paper's TCAM re-ordering).")
panel("Forwarding delay by path", quantiles("pseudocong_dataplane_forwarding_delay_seconds", by="path", qs=(0.5, 0.99)),
      unit="s", desc="Table hit to actions: hit, swap_in (rule fetched from the backing table), install_wait.")
panel("Switch packets",
      [q('sum(rate(pseudocong_switch_packets_received_total[1m]))', "received"),
       q('sum(rate(pseudocong_switch_packets_forwarded_total[1m]))', "forwarded"),
       q('sum by (reason) (rate(pseudocong_switch_packets_dropped_total[1m]))', "dropped {{reason}}"),
       q('rate(pseudocong_switch_table_misses_total[1m])', "table misses"),
       q('sum(rate(pseudocong_switch_packet_ins_sent_total[1m]))', "PACKET_INs sent")],
      unit="pps", desc="Frames through the software switch's ports.")
panel("Flow entries", [q('pseudocong_switch_flow_entries', "flow table")])
panel("Linux ports (AF_PACKET)",
      [q('sum by (port, iface) (rate(pseudocong_afport_rx_frames_total[1m]))', "rx {{iface}}"),
       q('sum by (port, iface) (rate(pseudocong_afport_kernel_drops_total[1m]))', "ring full drops {{iface}}"),
       q('sum by (port, iface) (rate(pseudocong_afport_tx_errors_total[1m]))', "tx errors {{iface}}")],
      unit="pps", desc="Frames read from each --port interface, and frames lost before the switch saw them "
                       "(receive ring full): a live run that drops here measures something the model does not.")

row("Probes")
panel("Probe RTT percentiles", quantiles("pseudocong_probe_rtt_seconds", by="kind"), unit="s",
      desc="SYN→SYN-ACK (kind=syn) and data→ACK (kind=data) RTTs measured by the probes.")


def share(kind, lo, hi, legend):
    count = 'sum(pseudocong_probe_rtt_seconds_count{kind="%s"})' % kind
    def b(le):
        return 'sum(pseudocong_probe_rtt_seconds_bucket{kind="%s",le="%s"})' % (kind, le)
    if lo is None:
        num = b(hi)
    elif hi is None:
        num = "(%s - %s)" % (count, b(lo))
    else:
        num = "(%s - %s)" % (b(hi), b(lo))
    return q("%s / %s" % (num, count), legend)


panel("SYN RTT timer bins (Berkeley: 5.8 s, 24 s, 75 s)",
      [share("syn", None, "5.8", "no retransmission [0, 5.8 s)"),
       share("syn", "5.8", "24", "1 retransmission [5.8, 24 s)"),
       share("syn", "24", "75", "2 retransmissions [24, 75 s)"),
       share("syn", "75", None, "connection fails ≥ 75 s")],
      unit="percentunit", kind="bargauge", maxv=1,
      desc="Share of answered SYN probes per Berkeley timer bin, from the RTT histogram's bucket edges (le ≤ edge; the "
           "report's bins are [lo, hi), which differ only for an RTT exactly on an edge).")
panel("SYN RTT timer bins (Linux: 1, 3, 7, 15 s)",
      [share("syn", None, "1", "no retransmission [0, 1 s)"),
       share("syn", "1", "3", "1 retransmission [1, 3 s)"),
       share("syn", "3", "7", "2 retransmissions [3, 7 s)"),
       share("syn", "7", None, "3 or more ≥ 7 s")],
      unit="percentunit", kind="bargauge", maxv=1,
      desc="The same SYN RTTs binned by the Linux SYN retransmission times.")
panel("Data RTT timer bins (Berkeley RTO 1.5 s doubling)",
      [share("data", None, "1.5", "no retransmission [0, 1.5 s)"),
       share("data", "1.5", "4.5", "1 retransmission [1.5, 4.5 s)"),
       share("data", "4.5", "10.5", "2 retransmissions [4.5, 10.5 s)"),
       share("data", "10.5", None, "3 or more ≥ 10.5 s")],
      unit="percentunit", kind="bargauge", maxv=1,
      desc="Share of answered data probes per Berkeley data-RTO bin (the paper: 73.2 % ≥ 1.5 s at L = 3 500, 10 pps).")
panel("Targets up", [q('up{job=~"pseudocong-.*"}', "{{job}}")], kind="stat",
      desc="Whether Prometheus reaches each pseudocong process.")

# Lay out on a 24-column grid.
x = y = 0
rowh = 0
out = []
for p, w, h in panels:
    if p["type"] == "row":
        if x:
            y += rowh
        x, rowh = 0, 0
        p["gridPos"] = {"x": 0, "y": y, "w": 24, "h": 1}
        y += 1
    else:
        if x + w > 24:
            x, y = 0, y + rowh
            rowh = 0
        p["gridPos"] = {"x": x, "y": y, "w": w, "h": h}
        x += w
        rowh = max(rowh, h)
    out.append(p)

dashboard = {
    "uid": "pseudocong",
    "title": "pseudocong: SDN pseudo-congestion",
    "description": "Controller, software switch (local CPU, TCAM) and probes of a pseudocong live run.",
    "tags": ["pseudocong", "openflow", "sdn"],
    "timezone": "utc",
    "schemaVersion": 37,
    "version": 1,
    "editable": True,
    "refresh": "5s",
    "time": {"from": "now-15m", "to": "now"},
    "templating": {"list": []},
    "annotations": {"list": []},
    "panels": out,
}
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dashboards", "pseudocong.json")
with open(path, "w") as f:
    json.dump(dashboard, f, indent=2, ensure_ascii=False)
    f.write("\n")
print("wrote", path)
