# hopctl — build, test and regenerate.
#
# make demo       set up, then the main job on a shipped real graph
# make test       set up, then everything CI checks (Go tests, short fuzz
#                 runs, torch round trips and oracles)
# make deps       install what the tests need (Debian torch, Go modules)
# make build      build bin/hopctl
# make wheel      dist/hopctl_torch-VERSION-py3-none-PLATFORM.whl: the Python package
#                 with the binary (GOARCH=arm64 cross-compiles); docs/install.md
# make pytest-install  the wheel, pip install and the pre-commit hooks, tested
# make fuzz       run every fuzz target for FUZZTIME (default 10m)
# make bench      benchmarks (docs/performance-log.md)
# make proto      regenerate Go and Python code from proto/ (protoc + protoc-gen-go)
# make testdata   re-export the real-model corpus with Debian's torch (1.13, 2.14),
#                 and the torch.export archives with torch 2.6 and 2.14 (testdata/pt2)

GO      ?= go
# Debian's torch lives under /usr/bin/python3; override with PYTHON=... if needed.
# (Recursively expanded: evaluated when used, i.e. after `make deps`.)
PYTHON  ?= $(shell scripts/find-python.sh)
BIN     := bin/hopctl
# One number for the binary and the Python package (hopctl_torch checks
# that they agree); a release bumps this file.
VERSION ?= $(shell cat python/hopctl_torch/VERSION)
FUZZTIME ?= 3s
# Microsoft's SARIF validator, installed by scripts/install-deps.sh; the
# SARIF tests of internal/cli run it (and are skipped without this variable).
HOPCTL_TOOLS ?= /var/cache/hopctl/tools
SARIF_MULTITOOL ?= $(HOPCTL_TOOLS)/sarif-multitool/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool

.PHONY: deps build test gotest gotest-race pytest pytest-pt2 fuzz-short fuzz bench proto testdata testdata-pt2 testdata-releases demo clean wheel pytest-install

# A static, reproducible binary, as gh's release build: CGO_ENABLED=0 (no
# libc to load), -trimpath (no machine paths), -s -w (no symbol tables).
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w -X github.com/hopctl/hopctl/internal/build.Version=$(VERSION)" -o $(BIN) ./cmd/hopctl

deps:
	scripts/install-deps.sh

test: deps build gotest gotest-race fuzz-short pytest pytest-install

gotest:
	$(GO) vet ./...
	HOPCTL_SARIF_MULTITOOL=$(SARIF_MULTITOOL) $(GO) test ./...

# The race detector (it needs cgo: gcc, which scripts/install-deps.sh
# installs) over the code that runs goroutines or is called from them:
# atomicfile's concurrent removals, lint's workers and what they call (the
# joint, the partition, the loaders, the schema check), whole; pkg/ir's
# parallel decoder and what shares its results, by name (its whole suite
# is slow under -race).
RACE_PKGS = ./pkg/jointgraph ./pkg/partition ./pkg/load ./pkg/lint ./pkg/analyze/passes/schemacheck \
	./internal/atomicfile
RACE_IR = Parallel|NameIndex|Large|ValueMemoShared|EncodeToWriteError

gotest-race:
	CGO_ENABLED=1 $(GO) test -race $(RACE_PKGS)
	CGO_ENABLED=1 $(GO) test -race -run '$(RACE_IR)' ./pkg/ir

fuzz-short:
	scripts/fuzz.sh $(FUZZTIME)

fuzz:
	scripts/fuzz.sh $(if $(filter 3s,$(FUZZTIME)),10m,$(FUZZTIME))

# The Python suite under torch 1.13 (host), 2.6 and 2.14 (chroots); TORCH=2.14
# runs one of them.
pytest: build
	HOPCTL=$(CURDIR)/$(BIN) HOPCTL_PYTHON=$(PYTHON) scripts/pytest.sh $(TORCH)

# ExportedProgram in the bridge against .pt2 archives, in the torch 2.6 and 2.14
# chroots (scripts/chroot.sh); python/tests/test_exported_program.py.
pytest-pt2: build
	scripts/torch.sh 2.6 -- env PYTHONPATH=python HOPCTL=$(CURDIR)/$(BIN) python3 -m unittest python/tests/test_exported_program.py -v
	scripts/torch.sh 2.14 -- env PYTHONPATH=python HOPCTL=$(CURDIR)/$(BIN) python3 -m unittest python/tests/test_exported_program.py -v

# The wheel: python/setup.py builds hopctl (CGO_ENABLED=0, -trimpath,
# -ldflags "-s -w -X .../build.Version=VERSION", for GOOS/GOARCH) into the
# wheel's .data/scripts, so pip installs it on PATH, and tags the wheel for
# that platform. The build directory is fresh each time: setuptools would
# otherwise carry a deleted module over from the last build.
WHEEL_DIR ?= dist
WHEEL_BUILD = bin/wheel-build
wheel:
	rm -rf $(WHEEL_BUILD) && mkdir -p $(WHEEL_BUILD) $(WHEEL_DIR)
	cd python && GO="$$(command -v $(GO))" $(if $(GOOS),GOOS=$(GOOS)) $(if $(GOARCH),GOARCH=$(GOARCH)) \
	  $(PYTHON) setup.py -q egg_info --egg-base $(CURDIR)/$(WHEEL_BUILD) build --build-base $(CURDIR)/$(WHEEL_BUILD) \
	  bdist_wheel --bdist-dir $(CURDIR)/$(WHEEL_BUILD)/bdist --dist-dir $(abspath $(WHEEL_DIR))
	@ls $(WHEEL_DIR)/hopctl_torch-$(VERSION)-*.whl

# How users install and plug hopctl in: the wheel installed into a fresh
# venv of Debian's Python with no Go on PATH, pip install from a copy of the
# checkout with Go (python/tests/test_wheel.py), and .pre-commit-hooks.yaml
# under a real pre-commit (python/tests/test_precommit.py).
pytest-install: build wheel
	HOPCTL_WHEEL_DIR=$(abspath $(WHEEL_DIR)) HOPCTL_GO="$$(command -v $(GO))" HOPCTL=$(CURDIR)/$(BIN) PYTHONPATH=python \
	  $(PYTHON) -m unittest python/tests/test_wheel.py python/tests/test_precommit.py -v

bench:
	scripts/bench.sh

proto:
	protoc --plugin=protoc-gen-go="$$($(GO) tool -n protoc-gen-go)" \
	  --go_out=. --go_opt=module=github.com/hopctl/hopctl \
	  --python_out=python/hopctl_torch/_proto \
	  -Iproto proto/hopctl/v1/graph.proto

# The real-model corpus from torch 1.13 (host) and 2.14 (chroot); see
# python/tools/corpus.py (COMMITTED).
testdata: build testdata-pt2 testdata-releases
	PYTHONPATH=python $(PYTHON) python/tools/make_testdata.py testdata/models
	PYTHONPATH=python scripts/torch.sh 2.14 -- python3 python/tools/make_testdata.py testdata/models-torch2.14

# torch.export archives: torch 2.6 writes the legacy zip layout, 2.14 the
# pt2_archive layout (needs the chroots of scripts/chroot.sh).
testdata-pt2:
	scripts/torch.sh 2.6 -- python3 python/tools/make_pt2.py testdata/pt2
	scripts/torch.sh 2.14 -- python3 python/tools/make_pt2.py testdata/pt2

# Programs one release accepts and the next refuses, with both releases'
# verdicts (the 2.6 run writes the graphs, the 2.14 run adds its verdicts).
testdata-releases:
	scripts/torch.sh 2.6 -- python3 python/tools/make_releases.py testdata/releases
	scripts/torch.sh 2.14 -- python3 python/tools/make_releases.py testdata/releases

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
	rm -rf bin dist
