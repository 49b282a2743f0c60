# The two commands a newcomer needs:
#   make run   - the main job: the simulated reproduction of paper 000 into results/
#   make test  - install what the tests need (Debian packages, as root) and run every test
GO      ?= go
BIN     := bin/pseudocong
RESULTS ?= results

.PHONY: run test unit deps build bench fuzz vet clean lint race integration serial soak validate pgo

build:
	$(GO) build -o $(BIN) ./cmd/pseudocong

run: build
	./$(BIN) experiment run paper --backend sim --out $(RESULTS)

# Everything: lint (gofmt, go mod tidy, go vet, staticcheck), the unit
# tests under -race, every test with real peers (Open vSwitch, namespaces,
# tshark, Prometheus: root and the Debian packages of
# scripts/install-deps.sh), then the live-vs-sim timing tests alone.
# Phases one by one: make lint, make race, make integration, make serial.
test: deps
	bash scripts/test.sh all

lint race integration serial:
	bash scripts/test.sh $@

# Unit tests only: no root, no packages, a couple of minutes.
unit:
	$(GO) test -count=1 ./...

deps:
	@if [ "$$(id -u)" = 0 ]; then bash scripts/install-deps.sh; \
	else echo "make test: not root; integration tests need root and scripts/install-deps.sh" >&2; exit 1; fi

bench: build
	bash scripts/bench.sh

# Regenerate cmd/pseudocong/default.pgo, the CPU profile go build optimises
# the binary with (same results, fewer instructions; docs/high-bdp.md).
pgo:
	bash scripts/pgo.sh

# Our TCP side by side with ns-3 3.37 on the dumbbell grid (the table of
# docs/tcp-validation.md); needs scripts/install-deps.sh's ns-3 packages.
validate:
	sh validation/ns3/build.sh
	$(GO) run ./validation/ns3/compare -ns3 bin/ns3/dumbbell

# Short fuzzing pass over every decoder (longer: FUZZTIME=10m make fuzz).
FUZZTIME ?= 30s
fuzz:
	bash scripts/fuzz.sh $(FUZZTIME)

# N fresh clones of main, .ci/run in each (SOAK=10 SOAK_ARGS=--busy make soak).
SOAK ?= 2
soak:
	bash scripts/ci-soak.sh $(SOAK) $(SOAK_ARGS)

clean:
	rm -rf bin $(RESULTS)
