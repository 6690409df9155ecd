# Tessera. `make help` lists the targets.

SHELL := /usr/bin/env bash
GO ?= go
BIN := $(CURDIR)/bin
VERSION ?= v0.1.0
KUBE_VERSION := v1.37.2
LDFLAGS := -X k8s.io/component-base/version.gitVersion=$(KUBE_VERSION)+tessera-$(VERSION) \
           -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37 \
           -X k8s.io/client-go/pkg/version.gitVersion=$(KUBE_VERSION)+tessera-$(VERSION)
ROOT_DIR ?= .tessera
CACHE_ROOT_DIR ?= .tessera-cache
SHARDED_DIR ?= .tessera-sharded
VW_ROOT_DIR ?= .tessera-virtual-workspaces
TEST_TIMEOUT ?= 35m
# Static binaries everywhere: the images have no C library, and builds,
# tests and the e2e tools share one build cache when they agree on it.
export CGO_ENABLED ?= 0

# kubectl: the machine's, or one built from Go modules when there is none.
KUBECTL ?= $(shell if [ -x /usr/bin/kubectl ]; then echo /usr/bin/kubectl; elif command -v kubectl >/dev/null 2>&1; then command -v kubectl; else echo $(BIN)/kubectl; fi)

.DEFAULT_GOAL := help

.PHONY: help
help: ## List the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_-]+:.*## / {printf "  %-14s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: build
build: ## Build the binaries (tessera, tessera-front-proxy, tessera-cache-server, tessera-virtual-workspaces, tessera-syncer, tessera-servlet, kubectl plugins) into ./bin
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/ ./cmd/...

# Images: one per binary, the static binary on an empty base, built from Go
# (hack/images) without a daemon, a registry or a base image.
IMAGES_DIR ?= $(BIN)/images
IMAGE_REPOSITORY ?= ghcr.io/tessera-dev
IMAGE_BINARIES := tessera tessera-front-proxy tessera-cache-server tessera-virtual-workspaces tessera-syncer tessera-servlet

.PHONY: images
images: build ## Build the container images as tarballs under ./bin/images (docker load, kind load image-archive, ctr images import)
	$(GO) run ./hack/images -output-dir $(IMAGES_DIR) -repository $(IMAGE_REPOSITORY) -tag $(VERSION) \
		$(foreach b,$(IMAGE_BINARIES),$(b)=$(BIN)/$(b))

.PHONY: images-push
images-push: build ## Push the images to REGISTRY (e.g. make images-push REGISTRY=registry.example.com/tessera), with ~/.docker/config.json's credentials
	@[ -n "$(REGISTRY)" ] || { echo "make images-push needs REGISTRY=<registry>/<path>" >&2; exit 2; }
	$(GO) run ./hack/images -push -repository $(REGISTRY) -tag $(VERSION) \
		$(foreach b,$(IMAGE_BINARIES),$(b)=$(BIN)/$(b))

.PHONY: run
run: build ## Run `tessera start` with embedded etcd under ./.tessera
	$(BIN)/tessera start --root-directory $(ROOT_DIR)

.PHONY: run-sharded
run-sharded: build ## Run a sharded installation (cache server, root, shard-1, shard-2, virtual workspaces, front-proxy) under ./.tessera-sharded
	$(GO) run ./hack/run-sharded -dir $(SHARDED_DIR) -bin $(BIN)

.PHONY: run-cache-server
run-cache-server: build ## Run tessera-cache-server with embedded etcd under ./.tessera-cache (HTTPS on 6444)
	$(BIN)/tessera-cache-server --root-directory $(CACHE_ROOT_DIR)

.PHONY: run-virtual-workspaces
run-virtual-workspaces: build ## Run tessera-virtual-workspaces for the shard of `make run` (HTTPS on 6445, certificates under ./.tessera-virtual-workspaces)
	$(BIN)/tessera-virtual-workspaces --root-directory $(VW_ROOT_DIR) \
		--kubeconfig $(ROOT_DIR)/admin.kubeconfig --context shard-base --shard-name root \
		--client-ca-file $(ROOT_DIR)/certs/ca.crt

.PHONY: install
install: ## Install the binaries (tessera, kubectl plugins) into GOBIN
	$(GO) install -ldflags "$(LDFLAGS)" ./cmd/...

KUBECTL_LDFLAGS := -X k8s.io/component-base/version.gitVersion=$(KUBE_VERSION) -X k8s.io/component-base/version.gitMajor=1 \
                   -X k8s.io/component-base/version.gitMinor=37 -X k8s.io/client-go/pkg/version.gitVersion=$(KUBE_VERSION)

$(BIN)/kubectl:
	cd hack/tools/kubectl && $(GO) build -ldflags "$(KUBECTL_LDFLAGS)" -o $(BIN)/kubectl .

.PHONY: kubectl
kubectl: $(KUBECTL) ## Make sure a kubectl is available (builds one when the machine has none)

.PHONY: test
test: verify kubectl ## Verify, then run unit, integration, fuzz and e2e tests (what CI runs)
	@# The shards' logs bury a failure's reasons: they are repeated at the end.
	@set -o pipefail; log=$$(mktemp); \
	if ! KUBECTL=$(KUBECTL) $(GO) test -timeout $(TEST_TIMEOUT) ./... 2>&1 | tee $$log; then \
		echo "=== failed tests and their messages:"; grep -E -A12 -- '^\s*--- FAIL|^panic:|^FAIL' $$log | grep -v -E '^[IEW][0-9]{4} ' | tail -200; rm -f $$log; exit 1; \
	fi; rm -f $$log
	$(MAKE) --no-print-directory test-fidelity
	$(MAKE) --no-print-directory fuzz
	$(MAKE) --no-print-directory test-e2e

# test/fidelity is a module of its own (it needs k8s.io/kubernetes, which the
# main module must not): it feeds the same objects to upstream's and
# Tessera's defaulting and validation of every built-in kind.
.PHONY: test-fidelity
test-fidelity: ## Compare Tessera's built-in registries with Kubernetes' (test/fidelity)
	cd test/fidelity && $(GO) test -count=1 ./...

# Fuzz targets: `go test` runs their seed corpora; this runs each one for
# FUZZ_TIME beyond them (go test -fuzz takes one target and one package).
FUZZ_TIME ?= 10s
FUZZ_TARGETS := ./pkg/logicalcluster:FuzzPath ./shard/filters:FuzzParse ./shard/authentication/serviceaccount:FuzzParseAndVerify

.PHONY: fuzz
fuzz: ## Run every fuzz target for FUZZ_TIME (10s) beyond its seed corpus
	@set -e; for t in $(FUZZ_TARGETS); do \
		echo "fuzz $${t#*:} in $${t%%:*} for $(FUZZ_TIME)"; \
		$(GO) test -run '^$$' -fuzz "^$${t#*:}$$" -fuzztime $(FUZZ_TIME) "$${t%%:*}"; \
	done

.PHONY: test-unit
test-unit: ## Run unit tests only
	$(GO) test -short ./pkg/... ./shard/... ./cacheserver/... ./virtual/...

.PHONY: test-integration
test-integration: kubectl ## Run the integration tests only
	KUBECTL=$(KUBECTL) $(GO) test -timeout $(TEST_TIMEOUT) ./test/integration/...

# e2e: the real binaries as processes, physical clusters from a provider
# (test/e2e, hack/e2e.sh). Tools are built from hack/tools/* into a cache
# outside the repository, once per version (hack/e2e-tools.sh).
E2E_ENV = MAKE="$(MAKE)" GO="$(GO)" KUBECTL="$(KUBECTL)"

.PHONY: e2e-tools
e2e-tools: ## Build the e2e tools (kube-apiserver, kubelet, etcd, coredns, kwok, helm) into the tool cache if missing
	@GO="$(GO)" hack/e2e-tools.sh local >/dev/null

.PHONY: test-e2e
test-e2e: kubectl ## Run the e2e suites: tessera processes and kwok-backed physical clusters on 127.0.0.1
	$(E2E_ENV) hack/e2e.sh local

.PHONY: test-e2e-kind
test-e2e-kind: kubectl ## Run the e2e suites with kind clusters as physical clusters (needs Docker)
	$(E2E_ENV) hack/e2e.sh kind

.PHONY: bench
bench: build ## Run the benchmarks and print their figures
	$(GO) run ./test/bench/shard -tessera $(BIN)/tessera -syncer $(BIN)/tessera-syncer -servlet $(BIN)/tessera-servlet
	$(GO) run ./test/bench/sharded -bin $(BIN)

.PHONY: codegen
codegen: ## Regenerate deepcopy and OpenAPI code
	hack/update-codegen.sh

.PHONY: verify
verify: ## Check formatting, vet and generated code
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }
	$(GO) vet ./...
	hack/verify-codegen.sh

.PHONY: lint
lint: verify ## Alias of verify

.PHONY: clean
clean: ## Remove build output and the local root directories
	rm -rf $(BIN) $(ROOT_DIR) $(CACHE_ROOT_DIR) $(VW_ROOT_DIR) $(SHARDED_DIR)
