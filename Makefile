# Kruise — developer entry points. `make demo` and `make test` are the README's two commands.
SHELL := bash
.SHELLFLAGS := -o pipefail -ec
.DEFAULT_GOAL := help

GO        ?= go
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X github.com/kruise-ng/kruise/pkg/platform/version.Version=$(VERSION)
SANDBOX_DIR ?= .sandbox
NODES     ?= 3
# Pass E2E_JSON=file to append `go test -json` output of the e2e and e2e-node targets to file.
E2E_JSON  ?=

BINARIES := kruise-manager kruise-daemon kubectl-kruise kruise-sandbox

.PHONY: help
help: ## list the targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

# Static (CGO_ENABLED=0) and -trimpath, like the tools: the Kubernetes packages Kruise shares with
# kube-apiserver (k8s.io/api, client-go, apiserver, ...) are then reused from the tools' build cache.
.PHONY: build
build: ## build Kruise's binaries into bin/ (the go command's output in bin/logs/build.log, shown on failure)
	@CGO_ENABLED=0 hack/quiet.sh bin/logs/build.log $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o bin/ $(addprefix ./cmd/,$(BINARIES))
	@echo "built $(BINARIES) into bin/"

# The pinned tools each target runs; hack/tools.sh builds those missing (see its header for the order).
# A sandbox runs the control plane and kwok; kubectl is what make demo's closing lines point to.
SANDBOX_TOOLS   := kube-apiserver kube-controller-manager kube-scheduler kubectl etcd kwok
REAL_NODE_TOOLS := kubelet containerd registry
APISERVER_TOOLS := kube-apiserver etcd

.PHONY: tools
tools: check-go ## build the whole pinned toolchain from source into bin/ (only what is missing): what make test needs
	hack/tools.sh

.PHONY: demo-tools
demo-tools: check-go ## build only what make demo and make sandbox run (DEMO_REAL_NODE=1: and the real node's)
	@hack/tools.sh $(SANDBOX_TOOLS) $(if $(DEMO_REAL_NODE),$(REAL_NODE_TOOLS))

.PHONY: check-go
check-go:
	@command -v $(GO) >/dev/null || { echo "Kruise builds with Go 1.26: '$(GO)' is not on PATH; install Go, then run make again" >&2; exit 1; }

# API_PORT=N gives the sandbox's API server a fixed loopback port (a taken port is refused).
API_PORT ?=

.PHONY: demo
demo: demo-tools build ## a sandbox with Kruise and a 50-pod CloneSet rolled v1 → v2 in place, live (DEMO_REAL_NODE=1 adds the real node; root)
	bin/kruise-sandbox demo --dir $(SANDBOX_DIR) --nodes $(NODES) $(if $(DEMO_REAL_NODE),--real-node) $(if $(API_PORT),--api-port $(API_PORT))

.PHONY: sandbox
sandbox: demo-tools build ## start a local cluster with $(NODES) kwok nodes and Kruise in $(SANDBOX_DIR)
	bin/kruise-sandbox up --dir $(SANDBOX_DIR) --nodes $(NODES) --kruise $(if $(API_PORT),--api-port $(API_PORT))

.PHONY: sandbox-down
sandbox-down: build ## stop the sandbox in $(SANDBOX_DIR) and remove its state
	bin/kruise-sandbox down --dir $(SANDBOX_DIR)

CONTROLLER_GEN := bin/controller-gen
GENERATED = $$(find apis -name 'zz_generated.*.go'; find client/clientset client/listers client/informers -name '*.go'; find config/crd config/rbac config/webhook config/default charts/kruise/templates/generated -name '*.yaml')
HELM := bin/helm
# The parts of config/default rendered from the chart (helm template's templates/ files).
DEFAULT_PARTS := manager daemon generated/crds generated/rbac generated/policies generated/webhooks

.PHONY: generate
generate: check-go ## regenerate deepcopy code, CRDs, RBAC and webhook manifests (controller-gen) and the Go client (client/: code-generator)
	@hack/tools.sh controller-gen helm client-gen lister-gen informer-gen
	cd apis && ../$(CONTROLLER_GEN) object:headerFile=../hack/boilerplate.go.txt paths=./...
	rm -rf config/crd/bases config/rbac config/webhook
	cd apis && ../$(CONTROLLER_GEN) crd:crdVersions=v1 output:crd:artifacts:config=../config/crd/bases paths=./...
	$(CONTROLLER_GEN) rbac:roleName=kruise-manager-role output:rbac:artifacts:config=config/rbac paths="./pkg/controller/...;./pkg/app/manager/...;./pkg/webhook/..."
	$(CONTROLLER_GEN) rbac:roleName=kruise-daemon-role output:rbac:artifacts:config=config/rbac/daemon paths="./pkg/app/daemon/...;./pkg/node/..."
	$(CONTROLLER_GEN) webhook output:webhook:artifacts:config=config/webhook paths=./pkg/...
	$(GO) run ./hack/installgen charts/kruise/templates/generated
	hack/clientgen.sh
	rm -rf .chart-render && $(HELM) template kruise charts/kruise --namespace kruise-system --set managedBy=kustomize --output-dir .chart-render >/dev/null
	for p in $(DEFAULT_PARTS); do cp .chart-render/kruise/templates/$$p.yaml config/default/$$(basename $$p).yaml; done; rm -rf .chart-render

.PHONY: verify-generated
verify-generated: ## fail when generated files differ from what `make generate` writes
	@before=$$(for f in $(GENERATED); do sha256sum $$f; done | sort); \
	  $(MAKE) --no-print-directory generate >/dev/null; \
	  after=$$(for f in $(GENERATED); do sha256sum $$f; done | sort); \
	  if [[ "$$before" != "$$after" ]]; then \
	    echo "generated files were stale; run 'make generate' and commit:"; \
	    diff <(echo "$$before") <(echo "$$after") || true; exit 1; fi

# The values files are rendered as a release of namespace default (where OpenKruise's chart keeps
# its release: values-openkruise.yaml puts everything in installation.namespace); test/chart checks
# what the keys of OpenKruise's chart do, and that upgrading its release keeps its namespace.
.PHONY: chart
chart: check-go ## helm lint and helm template of charts/kruise (defaults and test/chart/values-*.yaml; bad values refused; go test ./test/chart)
	@hack/tools.sh helm
	$(HELM) lint --strict charts/kruise
	$(HELM) template kruise charts/kruise --namespace kruise-system >/dev/null
	for f in test/chart/values-*.yaml; do $(HELM) lint --strict charts/kruise -f $$f && $(HELM) template kruise charts/kruise --namespace default -f $$f >/dev/null; done
	for f in test/chart/invalid-*.yaml; do \
	  if out=$$($(HELM) template kruise charts/kruise -f $$f 2>&1); then echo "$$f: accepted, want refused"; exit 1; fi; \
	  grep -q "at '" <<<"$$out" || { echo "$$f: refused without naming the value:"; echo "$$out"; exit 1; }; done
	HELM=$(CURDIR)/$(HELM) $(GO) test -count=1 ./test/chart/

.PHONY: monitoring
monitoring: check-go ## the chart's alerting rules and dashboard: every expression parses and names the metrics e2e checks are served
	cd test/monitoring && $(GO) vet ./... && $(GO) test -count=1 ./...

.PHONY: unit
unit: ## unit tests (no cluster; apis/ is its own module)
	$(GO) test -count=1 ./cmd/... ./pkg/... ./test/compat/... ./test/soak/...
	cd apis && $(GO) test -count=1 ./...
	cd client && $(GO) vet ./... && $(GO) build ./...

# Each fuzz target (func FuzzXxx in a _test.go file under apis (its own module), cmd or pkg) runs for FUZZTIME after
# its seed corpus; a crasher is written to the package's testdata/fuzz/FuzzXxx/, which plain `go test`
# (make unit) replays from then on. Go's fuzzer may report "context deadline exceeded" when FUZZTIME
# ends while a worker is on an input; without a failing input written, that is no failure.
FUZZTIME ?= 10s

.PHONY: fuzz
fuzz: ## run each fuzz target for FUZZTIME (10s; FUZZTIME=5m for a longer run), one after another
	@for dir in $$(grep -rl --include='*_test.go' '^func Fuzz' apis cmd pkg | xargs -r -n1 dirname | sort -u); do \
	  mod=.; rel=$$dir; case $$dir in apis/*) mod=apis; rel=$${dir#apis/};; esac; \
	  names=$$($(GO) -C $$mod test -list '^Fuzz' ./$$rel); \
	  for name in $$(grep '^Fuzz' <<<"$$names"); do \
	    echo "fuzz: $$name in ./$$dir for $(FUZZTIME)"; \
	    if ! out=$$($(GO) -C $$mod test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) -parallel 2 ./$$rel 2>&1); then \
	      if grep -q 'context deadline exceeded' <<<"$$out" && ! grep -q 'Failing input written' <<<"$$out"; then \
	        echo "fuzz: $$name: the fuzzer stopped mid-input at its deadline (Go reports it as a failure); no failing input"; \
	      else echo "$$out"; exit 1; fi; \
	    else tail -n 2 <<<"$$out"; fi; \
	  done; done

.PHONY: integration
integration: check-go ## integration tests against a real kube-apiserver + etcd (and helm template)
	@hack/tools.sh $(APISERVER_TOOLS) helm
	$(GO) test -count=1 -timeout 10m ./test/integration/...

# go-test-e2e PACKAGES: runs e2e packages, appending `go test -json` to $(E2E_JSON) when set. The
# tests that only touch their own namespaces and nodes call t.Parallel and run E2E_PARALLEL at once
# on the shared sandbox, after the others (those restart the manager, start sandboxes of their own,
# or change what every test sees); they mostly wait, so more than the 2 cores run at once.
E2E_PARALLEL ?= 4
define go-test-e2e
	$(if $(E2E_JSON),$(GO) test -count=1 -timeout 30m -parallel $(E2E_PARALLEL) -json $(1) | tee -a $(E2E_JSON),$(GO) test -count=1 -timeout 30m -parallel $(E2E_PARALLEL) -v $(1))
endef

.PHONY: e2e
e2e: check-go ## end-to-end tests on a sandbox (control plane + kwok nodes; Kruise Rollouts on Kruise)
	@hack/tools.sh $(SANDBOX_TOOLS) kruise-rollout helm
	$(call go-test-e2e,./test/e2e/...)

.PHONY: e2e-node
e2e-node: check-go ## tests on the sandbox's real node (kubelet + containerd + runc; needs root)
	@hack/tools.sh $(SANDBOX_TOOLS) $(REAL_NODE_TOOLS) helm
	$(call go-test-e2e,./test/e2enode/...)

# Benchmarks print figures (they are not timed tests). N pods per scenario; BENCH_JSON=file appends
# one JSON object per scenario; BENCH_PROFILE=dir saves the manager's profiles of each rollout
# (and of each pod creation latency run). BENCH_PROFILES: the kwok nodes' profiles, each on a
# sandbox of its own (rewrite: every scenario; no-rewrite: a kubelet that does not rewrite a Ready it
# did not compute, the in-place scenarios again, rows SCENARIO/no-rewrite; docs/sandbox.md).
N ?= 500
BENCH_NODES ?= 10
BENCH_PROFILES ?= rewrite,no-rewrite

.PHONY: bench
bench: check-go ## CloneSet and Advanced StatefulSet scale-up and in-place rollouts (maxUnavailable 20%, 100%), an Advanced DaemonSet's on N extra kwok nodes (maxUnavailable 20%), a SidecarSet upgrade (maxUnavailable 20%) and a Deployment rollout, N=$(N) pods on $(BENCH_NODES) kwok nodes; pod creation latency with 0, 1, 20 SidecarSets and under a WorkloadSpread of 3 subsets; the in-place rollouts again on nodes that do not rewrite Ready (BENCH_PROFILES); each kind's scenarios follow the floor (bench-floor) measured right before them, and each in-place rollout's wall time is given × that floor of the same maxUnavailable (the Advanced DaemonSet's: × the floor on its own nodes, floor-ads-maxu20)
	@hack/tools.sh $(SANDBOX_TOOLS)
	$(GO) run ./test/bench -n $(N) -nodes $(BENCH_NODES) -profiles $(BENCH_PROFILES) $(if $(BENCH_JSON),-json $(BENCH_JSON)) $(if $(BENCH_PROFILE),-profile $(BENCH_PROFILE))

# bench-scale runs the CloneSet's scenarios of make bench (scale-up, in-place at maxUnavailable 20%
# and 100%) at each N of SCALE_NS, on N/200 kwok nodes (at least BENCH_NODES; a kwok node takes 250
# pods): the cost per pod from 500 to 10,000 in one command; then SCALE_MANY (COUNTxSIZE) CloneSets
# rolled in place together against one CloneSet of as many pods. Not part of make test.
# SCALE_PROFILES: the node profiles of the CloneSet's runs (rewrite: its length stays ~45 minutes).
SCALE_NS ?= 500 2000 10000
SCALE_MANY ?= 200x25
SCALE_PROFILES ?= rewrite

.PHONY: bench-scale
bench-scale: check-go ## the CloneSet's bench at N = $(SCALE_NS) (N/200 kwok nodes) and $(SCALE_MANY) CloneSets against one; ~30 minutes
	@hack/tools.sh $(SANDBOX_TOOLS)
	set -e; for n in $(SCALE_NS); do \
	  nodes=$$(( n / 200 > $(BENCH_NODES) ? n / 200 : $(BENCH_NODES) )); \
	  $(GO) run ./test/bench -n $$n -nodes $$nodes -kinds cloneset -profiles $(SCALE_PROFILES) $(if $(BENCH_JSON),-json $(BENCH_JSON)) $(if $(BENCH_PROFILE),-profile $(BENCH_PROFILE)/n$$n); \
	done
	$(GO) run ./test/bench -many $(SCALE_MANY) -nodes 25 $(if $(BENCH_JSON),-json $(BENCH_JSON)) $(if $(BENCH_PROFILE),-profile $(BENCH_PROFILE)/many)

.PHONY: bench-floor
bench-floor: check-go ## the machine's floor: the in-place protocol's writes for N pods with no controller, the kubelet's Ready False awaited and each pod done once Ready again, all at once (floor-maxu100) and ceil(20% of N) in flight (floor-maxu20), on each of BENCH_PROFILES
	@hack/tools.sh $(SANDBOX_TOOLS)
	$(GO) run ./test/bench -floor -n $(N) -nodes $(BENCH_NODES) -profiles $(BENCH_PROFILES) $(if $(BENCH_JSON),-json $(BENCH_JSON))

# The fault campaign (test/soak): a world of workloads changed by a driver while an injector kills,
# freezes and restarts the control plane's processes, every invariant checked on a watch of the
# true objects. Its last line: `soak: F faults, O operations, C checks, V violations, converged p99
# T s`; it exits 1 on a violation, keeping the sandbox's logs. soak-short, part of make test, runs
# seeds that found violations (SOAK_SEEDS; docs/reliability.md lists each finding's seed) for
# SOAK_SHORT each: the campaign's regression.
DURATION ?= 30m
SEED ?= $(shell date +%s)
SOAK_SEEDS ?= 3 5
SOAK_SHORT ?= 5m

.PHONY: soak
soak: check-go ## the fault campaign for DURATION (30m) from SEED: faults, operations, invariant checks, violations, convergence
	@hack/tools.sh $(SANDBOX_TOOLS)
	$(GO) run ./test/soak -duration $(DURATION) -seed $(SEED)

.PHONY: soak-short
soak-short: check-go ## the fault campaign's regression seeds (SOAK_SEEDS), SOAK_SHORT (5m) each
	@hack/tools.sh $(SANDBOX_TOOLS)
	$(GO) build -o bin/soak ./test/soak
	@for seed in $(SOAK_SEEDS); do bin/soak -duration $(SOAK_SHORT) -seed $$seed || exit 1; done

.PHONY: lint
lint: check-go ## gofmt, go vet, staticcheck, the wings' import rules (test/wings), and no committed file over 1 MB that is not text
	@hack/tools.sh staticcheck
	@out=$$(gofmt -l apis cmd pkg test hack); \
	  if [[ -n "$$out" ]]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi
	@big=$$(git ls-files -z | xargs -0 -r stat -c '%s %n' | awk '$$1 > 1048576 {print $$2}' | \
	  while read -r f; do grep -Iq . "$$f" || echo "$$f"; done); \
	  if [[ -n "$$big" ]]; then echo "committed files over 1 MB that are not text (build outputs belong in bin/ or _output/):"; echo "$$big"; exit 1; fi
	$(GO) vet ./...
	bin/staticcheck ./...
	cd apis && $(GO) vet ./... && ../bin/staticcheck ./...
	$(GO) test -count=1 ./test/wings/

.PHONY: test
test: tools verify-generated lint chart monitoring unit fuzz integration e2e e2e-node soak-short ## everything: the whole toolchain if missing, lint, unit, fuzz, integration, e2e, real-node tests and the short fault campaign

.PHONY: clean
clean: ## remove built Kruise binaries (keeps the toolchain in bin/tools)
	rm -f $(addprefix bin/,$(BINARIES)) bin/soak
