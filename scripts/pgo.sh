#!/usr/bin/env bash
# make pgo: regenerates cmd/pseudocong/default.pgo, the CPU profile that
# `go build` (-pgo=auto, the default) uses to optimise the pseudocong
# binary, from the simulator's hot loops:
#
#   the high-bdp 10 Gbit/s cell, late-window and first-minute (NewReno, the
#   AIMD hour's cost), its BBR cell (SACK scoreboard, pacing), BenchmarkCell
#   (a 200 Mbit/s high-bdp cell), and tcp/dumbbell's bulk transfers.
#
# Profile-guided optimisation only changes inlining and devirtualisation,
# so results are the same with and without it (docs/high-bdp.md, round 8).
# About half a minute on 2 cores; run it when the hot paths change.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
GO=${GO:-go}
tmp=$(mktemp -d /tmp/pgo.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# The profiles are taken from binaries built without a profile, so the
# result does not depend on the profile it replaces.
"$GO" test -pgo=off -c -o "$tmp/highbdp.test" ./experiments/highbdp/
"$GO" test -pgo=off -c -o "$tmp/dumbbell.test" ./tcp/dumbbell/
prof() { # name binary bench args...
	local name=$1 bin=$2 bench=$3
	shift 3
	echo "pgo: profiling $bench $*" >&2
	(cd "$tmp" && "./$bin" -test.run '^$' -test.bench "^$bench\$" -test.benchtime 1x \
		-test.cpuprofile "$tmp/$name.pprof" "$@" >/dev/null)
}
prof late highbdp.test BenchmarkAIMD10GFull -aimd10gfull 5s
prof first highbdp.test BenchmarkAIMD10G -aimd10g 60s
prof bbr highbdp.test BenchmarkBBR10G
prof cell highbdp.test BenchmarkCell
prof dumbbell dumbbell.test 'Benchmark(Dumbbell|Bulk1G)'

"$GO" tool pprof -proto "$tmp"/*.pprof >"$tmp/merged.pgo"
mv "$tmp/merged.pgo" cmd/pseudocong/default.pgo
echo "pgo: wrote cmd/pseudocong/default.pgo ($(stat -c %s cmd/pseudocong/default.pgo) bytes)" >&2
