# The two commands a newcomer needs:
#   make run   - the main job: the simulated reproduction of paper 000 into results/
#   make test  - install what the tests need (Debian packages, as root) and run every test
GO      ?= go
BIN     := bin/pseudocong
RESULTS ?= results

.PHONY: run test unit deps build bench fuzz vet clean

build:
	$(GO) build -o $(BIN) ./cmd/pseudocong

run: build
	./$(BIN) experiment run paper --backend sim --out $(RESULTS)

# Integration tests (Open vSwitch, namespaces, tshark, Prometheus) need root
# and the Debian packages that scripts/install-deps.sh installs.
test: deps
	$(GO) vet ./...
	$(GO) test -tags integration -count=1 -timeout 40m ./...

# Unit tests only: no root, no packages, a couple of minutes.
unit:
	$(GO) test -count=1 ./...

deps:
	@if [ "$$(id -u)" = 0 ]; then bash scripts/install-deps.sh; \
	else echo "make test: not root; integration tests need root and scripts/install-deps.sh" >&2; exit 1; fi

bench: build
	bash scripts/bench.sh

# Short fuzzing pass over every decoder (longer: FUZZTIME=10m make fuzz).
FUZZTIME ?= 30s
fuzz:
	bash scripts/fuzz.sh $(FUZZTIME)

clean:
	rm -rf bin $(RESULTS)
