# hopctl — build, test and regenerate.
#
# make build      build bin/hopctl
# make test       everything CI checks (Go tests, short fuzz runs, torch round trips)
# make proto      regenerate Go and Python code from proto/ (protoc + protoc-gen-go)
# make testdata   re-export the real-model corpus with Debian's torch
# make demo       the main job on a shipped real graph

GO      ?= go
# Debian's torch lives under /usr/bin/python3; override with PYTHON=... if needed.
PYTHON  ?= $(shell scripts/find-python.sh)
BIN     := bin/hopctl
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo 0.1.0-dev)
FUZZTIME ?= 3s

.PHONY: build test gotest pytest fuzz-short proto testdata demo clean

build:
	$(GO) build -ldflags "-X github.com/hopctl/hopctl/internal/build.Version=$(VERSION)" -o $(BIN) ./cmd/hopctl

test: build gotest fuzz-short pytest

gotest:
	$(GO) vet ./...
	$(GO) test ./...

fuzz-short:
	scripts/fuzz.sh $(FUZZTIME)

pytest: build
	PYTHONPATH=python HOPCTL=$(CURDIR)/$(BIN) $(PYTHON) -m unittest discover -s python/tests -v

proto:
	protoc --plugin=protoc-gen-go="$$($(GO) tool -n protoc-gen-go)" \
	  --go_out=. --go_opt=module=github.com/hopctl/hopctl \
	  --python_out=python/hopctl_torch/_proto \
	  -Iproto proto/hopctl/v1/graph.proto

testdata: build
	PYTHONPATH=python $(PYTHON) python/tools/make_testdata.py testdata/models

demo: build
	$(BIN) print testdata/models/mlp.pb

clean:
	rm -rf bin
