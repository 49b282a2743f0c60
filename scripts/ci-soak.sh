#!/usr/bin/env bash
# Soak CI: N fresh clones of main, `.ci/run` in each, one after another,
# optionally with every core kept busy by a bounded CPU hog. One line per
# run; the full log of each run is kept. Exits 1 if any run was red.
#
#   scripts/ci-soak.sh N [--busy]
#
# As CI does: a clone of the committed main (not the work tree), CI=true,
# run as root, shared/ copied beside it when there is one. Logs and clones
# go to $SOAK_DIR (default a new directory under /tmp); clones of green
# runs are removed. What failed tests save (packet captures) is kept in
# runN/artifacts.
set -euo pipefail
usage() { echo "usage: $0 N [--busy]" >&2; exit 2; }
[ $# -ge 1 ] && [[ $1 =~ ^[1-9][0-9]*$ ]] || usage
n=$1
busy=no
[ $# -ge 2 ] && { [ "$2" = --busy ] && busy=yes || usage; }

repo=$(cd "$(dirname "$0")/.." && pwd)
dir=${SOAK_DIR:-$(mktemp -d /tmp/ci-soak.XXXXXX)}
mkdir -p "$dir"
echo "ci-soak: $n run(s) of .ci/run on main (cloned anew for each run), busy=$busy, logs in $dir"

hogs=()
stop_hogs() {
	for p in "${hogs[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${hogs[@]}"; do wait "$p" 2>/dev/null || true; done
	hogs=()
}
trap stop_hogs EXIT INT TERM

red=0
for i in $(seq 1 "$n"); do
	run=$dir/run$i
	rm -rf "$run"
	mkdir -p "$run"
	git clone -q "$repo" "$run/main"
	commit=$(git -C "$run/main" rev-parse --short HEAD)
	if [ -d "$repo/../shared" ]; then
		cp -r "$repo/../shared" "$run/shared"
		chmod -R a-w "$run/shared"
	fi
	if [ "$busy" = yes ]; then
		# One spinning shell per core, each bounded to an hour whatever
		# happens to this script.
		for _ in $(seq 1 "$(nproc)"); do
			timeout 3600 sh -c 'while :; do :; done' &
			hogs+=($!)
		done
	fi
	start=$(date +%s)
	if (cd "$run/main" && CI=true PSEUDOCONG_TEST_ARTIFACTS="$run/artifacts" bash .ci/run </dev/null >"$run/ci.log" 2>&1); then
		result=green
	else
		result=red
		red=$((red + 1))
	fi
	secs=$(( $(date +%s) - start ))
	stop_hogs
	closing=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$run/ci.log" | awk '{p+=$1; f+=$3; s+=$5} END {printf "%d passed, %d failed, %d skipped", p, f, s}')
	printf '%s run %d/%d %s %4d s busy=%s main=%s (%s) log=%s\n' \
		"$(date -u '+%Y-%m-%d %H:%M')" "$i" "$n" "$result" "$secs" "$busy" "$commit" "$closing" "$run/ci.log"
	if [ "$result" = red ]; then
		grep -E -- '^--- FAIL|^FAIL|panic:' "$run/ci.log" | head -20 | sed 's/^/    /'
	else
		rm -rf "$run/main" "$run/shared"
	fi
done
[ "$red" -eq 0 ]
