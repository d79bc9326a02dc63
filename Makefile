# hopctl — build, test and regenerate.
#
# make demo       set up, then the main job on a shipped real graph
# make test       set up, then everything CI checks (Go tests, short fuzz
#                 runs, torch round trips and oracles)
# make deps       install what the tests need (Debian torch, Go modules)
# make build      build bin/hopctl
# make fuzz       run every fuzz target for FUZZTIME (default 10m)
# make bench      benchmarks (see README, Performance)
# make proto      regenerate Go and Python code from proto/ (protoc + protoc-gen-go)
# make testdata   re-export the real-model corpus with Debian's torch

GO      ?= go
# Debian's torch lives under /usr/bin/python3; override with PYTHON=... if needed.
# (Recursively expanded: evaluated when used, i.e. after `make deps`.)
PYTHON  ?= $(shell scripts/find-python.sh)
BIN     := bin/hopctl
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo 0.1.0-dev)
FUZZTIME ?= 3s
# Microsoft's SARIF validator, installed by scripts/install-deps.sh; the
# SARIF tests of internal/cli run it (and are skipped without this variable).
HOPCTL_TOOLS ?= /var/cache/hopctl/tools
SARIF_MULTITOOL ?= $(HOPCTL_TOOLS)/sarif-multitool/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool

.PHONY: deps build test gotest pytest fuzz-short fuzz bench proto testdata demo clean

build:
	$(GO) build -ldflags "-X github.com/hopctl/hopctl/internal/build.Version=$(VERSION)" -o $(BIN) ./cmd/hopctl

deps:
	scripts/install-deps.sh

test: deps build gotest fuzz-short pytest

gotest:
	$(GO) vet ./...
	HOPCTL_SARIF_MULTITOOL=$(SARIF_MULTITOOL) $(GO) test ./...

fuzz-short:
	scripts/fuzz.sh $(FUZZTIME)

fuzz:
	scripts/fuzz.sh $(if $(filter 3s,$(FUZZTIME)),10m,$(FUZZTIME))

pytest: build
	PYTHONPATH=python HOPCTL=$(CURDIR)/$(BIN) $(PYTHON) -m unittest discover -s python/tests -v

bench:
	scripts/bench.sh

proto:
	protoc --plugin=protoc-gen-go="$$($(GO) tool -n protoc-gen-go)" \
	  --go_out=. --go_opt=module=github.com/hopctl/hopctl \
	  --python_out=python/hopctl_torch/_proto \
	  -Iproto proto/hopctl/v1/graph.proto

testdata: build
	PYTHONPATH=python $(PYTHON) python/tools/make_testdata.py testdata/models

demo: build
	@echo '$$ hopctl analyze testdata/models/inplace_views.pb'
	@$(BIN) analyze testdata/models/inplace_views.pb
	@echo
	@echo '$$ hopctl analyze testdata/models/convbn.pb --format json'
	@$(BIN) analyze testdata/models/convbn.pb --format json
	@echo
	@echo '$$ hopctl analyze testdata/hops/nested3_mutation.pbtxt'
	@$(BIN) analyze testdata/hops/nested3_mutation.pbtxt

clean:
	rm -rf bin
