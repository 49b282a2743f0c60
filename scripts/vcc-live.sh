#!/usr/bin/env bash
# scripts/vcc-live.sh: the live vCC experiment (issue 12, cell (a) with 10
# senders, 5 ECN and 5 non-ECN Reno tenants, one receiver) on 11 network
# namespaces through a `pseudocong switch` process, without and with vCC
# on the tenant ports, in the same run. Needs root, iperf3, ss, nstat.
# Prints the per-class throughput of every round and the summary line.
#
# Knobs (environment): PSEUDOCONG_VCC_SECONDS (15), PSEUDOCONG_VCC_ROUNDS (2),
# PSEUDOCONG_VCC_RATE (50mbit), PSEUDOCONG_VCC_DELAY (5ms),
# PSEUDOCONG_VCC_RED (red,limit=1000000,min=90000,max=90001,probability=1.0,avpkt=1000,ecn),
# PSEUDOCONG_VCC_REACT (rtt or window), PSEUDOCONG_VCC_SS (non-empty: log ss -tin). Everything it creates (namespaces,
# veths, processes) is removed at the end, also on failure; the sysctls it
# sets are per namespace and go with them.
set -euo pipefail
cd "$(dirname "$0")/.."
go test -tags integration -count=1 -timeout 30m -run '^TestSerialVCCLiveFairness$' -v ./cmd/pseudocong/ 2>&1 |
	grep -E 'round [0-9]+ with|SUMMARY|--- (PASS|FAIL)|vcc_live_integration_test.go' || true
