#!/usr/bin/env bash
# make test / .ci/run: every check and every test, in phases.
#
#   bash scripts/test.sh [lint|race|integration|serial|all]   (default all)
#
# lint         gofmt -l is empty, go mod tidy changes nothing, go vet with
#              and without the integration tag, staticcheck (when the Go
#              module proxy serves it)
# race         the unit tests under the race detector, -short (the long
#              simulations, one goroutine each, run in the integration phase)
# integration  every test, real peers included (root; scripts/install-deps.sh),
#              packages in parallel; tests named TestSerial* are left out
# serial       the TestSerial* tests, one package at a time, nothing else
#              running: they compare live timing with the simulator, which
#              a loaded machine would skew
#
# Test output is go test -json summarised by tools/testsummary: package
# lines, the output of failed tests (long log blocks cut; the whole of it
# in $FAILED_OUTPUT, below), one "N passed, N failed, N skipped" line per
# phase. Under CI=true a skipped test fails the phase.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin:/usr/local/sbin:/usr/sbin:/sbin"
GO=${GO:-go}
# The tests build without cmd/pseudocong/default.pgo (make pgo): with it, a
# test binary of cmd/pseudocong and every BuildPseudocong would compile the
# whole module a second time (≈ 2 CPU-minutes each, race and not), for
# the same semantics. make build uses it; lint checks it parses.
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-pgo=off"
STATICCHECK_VERSION=${STATICCHECK_VERSION:-v0.8.2}
TOOLS=$PWD/bin/tools
mkdir -p "$TOOLS"

# PSEUDOCONG_TEST_ARTIFACTS=DIR keeps what failed tests save with
# t.ArtifactDir (e.g. the packet capture of a failed capture check) under
# DIR; scripts/ci-soak.sh sets it per run. Unset, they are deleted.
# The whole output of this run's failed tests, every phase's, goes to
# FAILED_OUTPUT: in that DIR when it is set, in bin/ otherwise.
ARTIFACTS=()
FAILED_OUTPUT=$PWD/bin/failed-tests.txt
if [ -n "${PSEUDOCONG_TEST_ARTIFACTS:-}" ]; then
	mkdir -p "$PSEUDOCONG_TEST_ARTIFACTS"
	art_dir=$(cd "$PSEUDOCONG_TEST_ARTIFACTS" && pwd)
	ARTIFACTS=(-artifacts -outputdir "$art_dir")
	FAILED_OUTPUT=$art_dir/failed-tests.txt
fi
rm -f "$FAILED_OUTPUT"

phase() { printf '\n=== %s (%s)\n' "$1" "$(date -u +%H:%M:%S)"; }

# summary [allow-short]: under CI=true every skip fails the phase, except
# in the race phase, which runs -short: the long single-goroutine
# simulations it skips run in the integration phase.
summary() {
	"$GO" build -o "$TOOLS/testsummary" ./tools/testsummary
	local flags=(-full "$FAILED_OUTPUT")
	[ "${CI:-}" = true ] && [ "${1:-}" != allow-short ] && flags+=(-no-skip)
	"$TOOLS/testsummary" "${flags[@]}"
}

lint() {
	phase "lint: gofmt"
	local unformatted
	unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './bin/*'))
	if [ -n "$unformatted" ]; then
		echo "gofmt -l lists files to format (run gofmt -w):"
		echo "$unformatted"
		return 1
	fi
	phase "lint: go mod tidy"
	"$GO" mod tidy -diff
	phase "lint: cmd/pseudocong/default.pgo parses"
	"$GO" tool pprof -raw cmd/pseudocong/default.pgo >/dev/null
	phase "lint: go vet"
	"$GO" vet ./...
	"$GO" vet -tags integration ./...
	phase "lint: staticcheck $STATICCHECK_VERSION"
	if [ ! -x "$TOOLS/staticcheck-$STATICCHECK_VERSION" ]; then
		if GOBIN="$TOOLS/sc" "$GO" install "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION"; then
			mv "$TOOLS/sc/staticcheck" "$TOOLS/staticcheck-$STATICCHECK_VERSION"
		else
			echo "WARNING: the Go module proxy did not serve staticcheck $STATICCHECK_VERSION; staticcheck NOT run"
			return 0
		fi
	fi
	"$TOOLS/staticcheck-$STATICCHECK_VERSION" ./...
	"$TOOLS/staticcheck-$STATICCHECK_VERSION" -tags integration ./...
}

race() {
	phase "race: unit tests under the race detector (-short)"
	"$GO" test -race -short -count=1 -timeout 15m -skip '^TestSerial' -json ./... | summary allow-short
}

integration() {
	phase "integration: every test, packages in parallel (TestSerial* left for the serial phase)"
	"$GO" test -tags integration -count=1 -timeout 15m "${ARTIFACTS[@]}" -skip '^TestSerial' -json ./... | summary
}

serial() {
	phase "serial: TestSerial*, one package at a time"
	local pkgs
	pkgs=$(grep -rl --include='*_test.go' -E '^func TestSerial' . | xargs -r -n1 dirname | sort -u)
	if [ -z "$pkgs" ]; then
		echo "no TestSerial tests"
		return 0
	fi
	# shellcheck disable=SC2086
	"$GO" test -tags integration -count=1 -timeout 15m -p 1 "${ARTIFACTS[@]}" -run '^TestSerial' -json $pkgs | summary
}

case "${1:-all}" in
lint) lint ;;
race) race ;;
integration) integration ;;
serial) serial ;;
all)
	# Plain calls, not a && chain: bash ignores set -e inside a function
	# that is called as part of a && list.
	lint
	race
	integration
	serial
	;;
*)
	echo "usage: $0 [lint|race|integration|serial|all]" >&2
	exit 2
	;;
esac
