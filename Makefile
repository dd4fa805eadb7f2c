# function-cluster-platform
#
#   make render     render every example with the crossplane CLI (the main job)
#   make test       run the tests (go test -race ./...)
#   make validate   render, then validate every render against ../shared/crds
#                   and Crossplane's own schemas: 0 failures, 0 missing schemas
#
# The crossplane CLI is built from the Go module proxy at a pinned version
# into bin/ (git-ignored); nothing else needs installing.

SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c

GO            ?= go
# The Go toolchain every build and test runs on (go.mod's toolchain line):
# the go1.27 line's newest patch, which the go command takes from the
# module proxy (about 76 MB, once per machine) when the machine has an
# older Go. A machine's own Go ignores go.mod's toolchain line
# (GOTOOLCHAIN=local), so it is exported here.
export GOTOOLCHAIN ?= go1.27.3
BIN           := bin
FUNCTION      := $(BIN)/function-cluster-platform
CROSSPLANE    := $(BIN)/crossplane
# The crossplane CLI (cmd/crank) is pinned in tools/go.mod.
XP_CLI_VERSION := $(shell awk '$$1=="github.com/crossplane/crossplane/v2"{print $$2; exit}' tools/go.mod)
# The Crossplane core make e2e and make fleet build and run
# (test/e2e/build-tools.sh): XP_VERSION=v2.3.5 make e2e, or
# make e2e XP_VERSION=v2.3.5, selects another (docs/e2e.md).
XP_VERSION    ?= v2.4.0
CRDS          ?= ../shared/crds
OUT           := _output
RENDER_OUT    := $(OUT)/render
VALIDATE_CACHE := $(OUT)/validate-cache
# Crossplane's own schemas make validate checks renders against: those of
# the Crossplane core make e2e runs, not the CLI's pin (the CLI of v2.3 and
# later, github.com/crossplane/crossplane/v2/cmd/crank, is a module of its
# own that the module proxy does not serve: 403 for v2.3.0 to v2.4.2).
XP_SCHEMAS_VERSION ?= $(XP_VERSION)
XP_IMAGE      := xpkg.crossplane.io/crossplane/crossplane:$(XP_SCHEMAS_VERSION)
# The function listens on the first free port from 9443 up, so that a render
# does not fail because another one (or anything else) holds 9443.
FN_PORT       ?= $(shell for p in $$(seq 9443 9543); do (exec 3<>/dev/tcp/127.0.0.1/$$p) 2>/dev/null || { echo $$p; break; }; done)
FN_ADDRESS    := 127.0.0.1:$(FN_PORT)

# Fuzz targets: package and name. FUZZTIME bounds each.
FUZZ_TARGETS  := ./internal/xr:FuzzDecodeValidate ./internal/overlay:FuzzMerge ./internal/modules/cluster:FuzzRun ./internal/lifecycle:FuzzNext ./internal/modules/cluster:FuzzLifecycle ./internal/modules/appenvironment:FuzzFrontend ./internal/portal:FuzzRequest ./internal/modules:FuzzTenancy ./internal/modules/database:FuzzEngineLifecycle ./internal/modules:FuzzNoDataLost ./internal/rollout:FuzzRollout ./internal/rollout:FuzzRelease ./internal/modules/cluster:FuzzRolloutGate
FUZZTIME      ?= 10s

# The package: an xpkg with the runtime image embedded, built without Docker.
XPKG          := $(OUT)/function-cluster-platform.xpkg
ARCH          ?= $(shell $(GO) env GOARCH)

.PHONY: all help build generate check-generated docs test lint deps fuzz bench bench-go bench-portal render validate redteam redteam-portal daytwo converge xpkg e2e fleet tools clean

# One line per target.
help:
	@echo "make render           render every example with the crossplane CLI, first and converged (via preview), into _output/render; preview -o yaml must print each converged render"
	@echo "make test             run the tests (go test -race ./...)"
	@echo "make validate         render, then validate every render against ../shared/crds and Crossplane's schemas"
	@echo "make lint             golangci-lint"
	@echo "make deps             list the dependencies' security floors (internal/deps/floors.txt) against go.mod; fail below one"
	@echo "make generate         regenerate the Input CRD, the legacy XRDs and Compositions, docs/reference, the README's resource graph and the replacement-only tables (MIRRORS=... re-reads the providers' source)"
	@echo "make check-generated  fail if generated files are out of date"
	@echo "make docs             fail if the docs are not true: generated pages, links and anchors, make targets, the binary's flags, README length, orphan pages, the package metadata (license, source, the readme naming every XR kind and cloud)"
	@echo "make fuzz             run each fuzz target for FUZZTIME (default 10s)"
	@echo "make redteam          replay the red-team attacks through the crossplane CLI"
	@echo "make redteam-portal   replay the attacks on the portal against one served on loopback (a fake API server): each must hold"
	@echo "make daytwo           render day-2 changes of the converged example Clusters through the crossplane CLI (upgrades, skips, downgrades, rotations, maintenance; a Database under an upgraded function) and validate them"
	@echo "make converge         converge XRs that are not the examples through the crossplane CLI, and validate them"
	@echo "make bench            load benchmark over gRPC against the raw and the SDK floor, per cloud and XR kind (about 8 minutes)"
	@echo "make bench-go         Go benchmarks: whole calls per cloud and the hot paths"
	@echo "make bench-portal     the portal with 1,000 open event streams on one namespace: memory, and CPU per change"
	@echo "make xpkg             build the xpkg (runtime image embedded) without Docker"
	@echo "make e2e              end to end on a real control plane (etcd, kube-apiserver, Crossplane core, provider-kubernetes)"
	@echo "make fleet N=100      N mixed XRs at once on that control plane: time to Ready, CPU, RSS, latency, then three faults"
	@echo "make build            build bin/function-cluster-platform"
	@echo "make tools            build the pinned crossplane CLI into bin/"
	@echo "make clean            remove bin/ and _output/"

all: build test

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags='-s -w' -o $(FUNCTION) .

# MIRRORS, when given, re-reads the Terraform providers' source into the
# schema extract first: git directories of the providers (fetched mirrors,
# no work tree needed), for example
#   make generate MIRRORS="-google=/path/terraform-provider-google.git -azurerm=/path/terraform-provider-azurerm.git -aws=/path/tf-aws-partial/.git -aws-rev=HEAD"
# where the AWS directory is a partial tree of terraform-provider-aws files
# copied from the stored code index, its SOURCES.tsv naming each file's
# upstream commit (-aws=oracle takes the oracle extract's rows instead)
# (cmd/replacegen; docs/lifecycle.md).
generate:
	cd input && $(GO) generate -tags generate ./...
	$(GO) run ./cmd/xrdgen
	$(GO) run ./cmd/refgen -crds=$(CRDS)
	if [ -n "$(MIRRORS)" ]; then $(GO) run ./cmd/replacegen -extract $(MIRRORS); fi
	$(GO) run ./cmd/replacegen -crds=$(CRDS)
	$(GO) run ./cmd/docgen

# Fail when a generated file differs from what its generator writes: the
# Input CRD (controller-gen), the legacy XRDs (xrdgen), the fields a
# reference resolves (refgen, from the provider CRDs), and the reference
# pages and the README's resource graph (docgen), and the clouds' tables of
# replacement-only fields (replacegen, from the committed schema extract
# cmd/replacegen/schema: no provider source, no network).
check-generated:
	cd input && $(GO) generate -tags generate ./...
	git diff --exit-code -- package/input || { echo "package/input is out of date: run make generate and commit it" >&2; exit 1; }
	$(GO) run ./cmd/xrdgen -check
	$(GO) run ./cmd/refgen -crds=$(CRDS) -check
	$(GO) run ./cmd/replacegen -crds=$(CRDS) -check
	$(GO) run ./cmd/docgen -check

# Keep the docs true: the generated pages are up to date (xrdgen, docgen),
# and README.md and docs/ link only to what exists and name only make
# targets and flags of the binary that exist (cmd/docscheck).
docs:
	$(GO) run ./cmd/xrdgen -check
	$(GO) run ./cmd/refgen -crds=$(CRDS) -check
	$(GO) run ./cmd/docgen -check
	$(GO) run ./cmd/docscheck

test:
	$(GO) test -race ./...

# golangci-lint with .golangci.yml, installed from the module proxy.
GOLANGCI_LINT_VERSION ?= v2.15.0
lint:
	$(GO) run github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION) run ./...

# The dependencies' security floors against go.mod (also part of make test).
deps:
	$(GO) test ./internal/deps -run TestFloors -v -count=1

# Each fuzz target for FUZZTIME (make fuzz FUZZTIME=5m for a long run).
fuzz:
	for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzzing $$name in $$pkg for $(FUZZTIME)"; \
		$(GO) test $$pkg -run='^$$' -fuzz="^$$name$$" -fuzztime=$(FUZZTIME) || exit 1; \
	done

# The load benchmark: the real binary and the two floors over gRPC on loopback.
bench: build
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags='-s -w' -o $(BIN)/floor ./cmd/floor
	$(GO) run ./cmd/loadgen -function=$(FUNCTION) -floor=$(BIN)/floor -examples=examples -out=$(OUT)/bench

# The Go benchmarks: whole calls per cloud and the hot paths.
bench-go:
	$(GO) test ./... -run='^$$' -bench=. -benchmem

# The portal with 1,000 open streams on one namespace.
bench-portal:
	$(GO) test ./internal/portal -run='^$$' -bench=BenchmarkStreams -benchtime=50x -count=3

# The static binary, an OCI runtime image tarball assembled from it by
# cmd/xpkg (following the Dockerfile's final stage), and
# crossplane xpkg build embedding it; then a check of the package's contents.
xpkg: $(CROSSPLANE)
	mkdir -p $(OUT)/xpkg/examples
	CGO_ENABLED=0 GOOS=linux GOARCH=$(ARCH) $(GO) build -trimpath -ldflags='-s -w' -o $(OUT)/xpkg/function .
	cd cmd/xpkg && $(GO) run . image --dockerfile=../../Dockerfile --binary=../../$(OUT)/xpkg/function \
		--arch=$(ARCH) --out=../../$(OUT)/xpkg/image.tar
	rm -f $(OUT)/xpkg/examples/*.yaml
	for c in gcp aws azure; do cp examples/$$c/cluster.yaml $(OUT)/xpkg/examples/$$c-cluster.yaml; done
	cp examples/budget/workloads.yaml $(OUT)/xpkg/examples/
	$(CROSSPLANE) xpkg build --package-root=package --examples-root=$(OUT)/xpkg/examples \
		--embed-runtime-image-tarball=$(OUT)/xpkg/image.tar --package-file=$(XPKG)
	cd cmd/xpkg && $(GO) run . check --package=../../$(XPKG)

# End to end on a real control plane (etcd, kube-apiserver, Crossplane core,
# provider-kubernetes) on loopback, the function over mTLS:
# test/e2e/run.sh. The binaries are built from the module proxy once and
# cached in ~/.cache/function-cluster-platform/e2e (about 16 minutes cold).
# FLEET_SMOKE=N runs a fleet of N after the scenarios, on the same stack.
e2e:
	XP_VERSION=$(XP_VERSION) CRDS=$(CRDS) FLEET=$(FLEET_SMOKE) SCENARIOS=1 test/e2e/run.sh

# The fleet: N mixed XRs applied at once, measured, then the faults (kill
# the function, restart Crossplane core, drop the EnvironmentConfigs for a
# minute). FLEET_TIMEOUT bounds each wait for the fleet to be Ready.
# N=1000 on two cores took 46 minutes to Ready and 49 for its rollout with
# run.sh's sizing knobs: the command is in docs/e2e.md ("N=1,000 on two cores").
N ?= 100
fleet:
	XP_VERSION=$(XP_VERSION) CRDS=$(CRDS) FLEET=$(N) FLEET_TIMEOUT=$(or $(FLEET_TIMEOUT),30m) test/e2e/run.sh

tools: $(CROSSPLANE)

$(CROSSPLANE): tools/go.mod tools/go.sum
	cd tools && $(GO) build -o ../$(CROSSPLANE) github.com/crossplane/crossplane/v2/cmd/crank

# Crossplane's own schemas, from the crossplane module's cluster/crds at
# XP_SCHEMAS_VERSION, laid out as the package crossplane beta validate would
# otherwise download.
$(VALIDATE_CACHE)/.ready-$(XP_SCHEMAS_VERSION):
	dir=$$($(GO) mod download -json github.com/crossplane/crossplane/v2@$(XP_SCHEMAS_VERSION) | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$$/\1/p'); \
	test -d "$$dir/cluster/crds" || { echo "no cluster/crds in github.com/crossplane/crossplane/v2@$(XP_SCHEMAS_VERSION)" >&2; exit 1; }; \
	pkg=$(VALIDATE_CACHE)/xpkg.crossplane.io/crossplane/crossplane@$(XP_SCHEMAS_VERSION); \
	mkdir -p $$pkg; \
	for f in $$dir/cluster/crds/*.yaml; do echo '---'; cat $$f; done > $$pkg/package.yaml
	touch $@

# Start the function on loopback, run the examples driver, stop the function
# whatever happens.
define with-function
	$(MAKE) --no-print-directory build
	if [ -z "$(FN_PORT)" ]; then echo "no free port from 9443 to 9543" >&2; exit 1; fi
	$(FUNCTION) --insecure --address=$(FN_ADDRESS) --metrics-address= > $(OUT)/function.log 2>&1 & pid=$$!; \
	trap 'kill $$pid 2>/dev/null || true' EXIT; \
	for i in $$(seq 1 50); do (exec 3<>/dev/tcp/127.0.0.1/$(FN_PORT)) 2>/dev/null && break; sleep 0.1; done; \
	kill -0 $$pid 2>/dev/null || { cat $(OUT)/function.log >&2; exit 1; }; \
	$(GO) run ./cmd/examples -crossplane=$(CROSSPLANE) -out=$(RENDER_OUT) -crds=$(CRDS) \
		-cache-dir=$(VALIDATE_CACHE) -crossplane-image=$(XP_IMAGE) -address=$(FN_ADDRESS) -function=$(FUNCTION) $(1)
endef

render: $(CROSSPLANE)
	mkdir -p $(OUT)
	$(call with-function,)

validate: $(CROSSPLANE) $(VALIDATE_CACHE)/.ready-$(XP_SCHEMAS_VERSION)
	mkdir -p $(OUT)
	$(call with-function,-validate)

# Replay the red-team attacks on the trust boundary through the crossplane
# CLI against the converged examples (cmd/examples/redteam.go).
redteam: $(CROSSPLANE)
	mkdir -p $(OUT)
	$(call with-function,-redteam)

# Replay the attacks on the portal (issue 35) against a portal served on
# loopback, built as the portal subcommand builds it, with a fake API
# server over HTTP (internal/portal/redteam_test.go): bad tokens, a flood
# of them, slowloris, bogus namespaces, look-alike images, names, trailing
# data, hand-written resource references, the quota. About 15 s.
redteam-portal:
	PORTAL_REDTEAM=1 $(GO) test ./internal/portal -run='^TestRedteam$$' -count=1 -v

# Day-2 changes of the converged example Clusters through the crossplane
# CLI: upgraded, skipped, downgraded, rotated, maintenance windows; each
# refused with a Fatal naming the field, or rendered, checked and validated
# (cmd/examples/daytwo.go).
daytwo: $(CROSSPLANE) $(VALIDATE_CACHE)/.ready-$(XP_SCHEMAS_VERSION)
	mkdir -p $(OUT)
	$(call with-function,-daytwo)

# Converge XRs that are not the examples (cmd/examples/testdata/converge)
# through the crossplane CLI until Ready: nothing withdrawn, no credential,
# the converged render validated (cmd/examples/converge.go).
converge: $(CROSSPLANE) $(VALIDATE_CACHE)/.ready-$(XP_SCHEMAS_VERSION)
	mkdir -p $(OUT)
	$(call with-function,-converge=cmd/examples/testdata/converge)

clean:
	rm -rf $(BIN) $(OUT)
