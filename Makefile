# mcp-fleet — build, test, lint, run, bench, images, release checks.
# Every target works offline once modules are downloaded; `make help` lists them.

SHELL        := bash
.SHELLFLAGS  := -eu -o pipefail -c
GO           ?= go
SERVERS      := devtools avinode gmail sheets supabase
MODULES      := shared $(addprefix servers/,$(SERVERS)) tools/fleetcheck
PKGS         := $(addsuffix /...,$(addprefix ./,$(MODULES)))
VERSION      ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT       ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
# Every server reads its version and commit from one package.
BUILDINFO    := github.com/mcp-fleet/mcp-fleet/shared/buildinfo
LDFLAGS      := -s -w -X $(BUILDINFO).version=$(VERSION) -X $(BUILDINFO).commit=$(COMMIT)
STATICCHECK  := honnef.co/go/tools/cmd/staticcheck@v0.8.2
COVER_MIN    ?= 80
BENCHTIME    ?= 1s
# Images: $(IMAGE_REPO)/<server>-mcp:$(IMAGE_TAG) and :latest. IMAGE_FROM=host
# copies the binaries `make build` made (offline); IMAGE_FROM=source compiles
# them in the Dockerfile's Go stage (pulls the golang image).
IMAGE_REPO   ?= mcp-fleet
IMAGE_TAG    ?= $(VERSION)
IMAGE_FROM   ?= host
IMAGE_ENGINE ?= $(shell command -v podman >/dev/null 2>&1 && echo podman || echo docker)
CA_BUNDLE    ?= $(firstword $(wildcard /etc/ssl/certs/ca-certificates.crt /etc/pki/tls/certs/ca-bundle.crt /etc/ssl/cert.pem))
FLEETCHECK   := $(GO) run ./tools/fleetcheck/cmd/fleetcheck
# podman would otherwise keep every stage of every build as an image; the
# copies of bin/ alone are 120 MB a build.
BUILD_OPTS   := $(if $(filter podman,$(notdir $(IMAGE_ENGINE))),--layers=false)

.PHONY: help build demo test lint cover bench bench-webhooks docs run-devtools run-avinode run-gmail run-sheets run-supabase conformance inspector sdk-check host-check postgres images image-names images-check images-clean release-check clean

help: ## list targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

build: ## build every server into bin/
	@mkdir -p bin
	@for s in $(SERVERS); do \
	  echo "go build bin/$$s-mcp"; \
	  CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/$$s-mcp ./servers/$$s/cmd/$$s-mcp; \
	done

demo: build ## play the charter workflow end to end: six agents over stdio on the local backends (state in .demo/)
	@# The error monitor's webhook-queue review is an opt-in widening of the policy.
	@$(GO) run ./tools/fleetcheck/cmd/charter-demo --bin bin --policy configs/acl.yaml \
	  --grant configs/acl.d/error-monitor-webhook-queue.yaml --dir .demo

postgres: ## make sure PostgreSQL binaries are installed (tests start their own throwaway cluster)
	@bash scripts/ensure-postgres.sh

test: postgres host-check ## run every module's tests with the race detector, and the LLM host check
	$(GO) test -race -count=1 $(PKGS)

lint: ## gofmt check, go vet, staticcheck
	@out=$$(gofmt -l $(MODULES)); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) run $(STATICCHECK) $(PKGS)

cover: postgres ## per-module statement coverage; fails under $(COVER_MIN)%
	@mkdir -p coverage; fail=0; \
	for m in $(MODULES); do \
	  name=$$(basename $$m); \
	  $(GO) test -count=1 -coverpkg=./$$m/... -coverprofile=coverage/$$name.out ./$$m/... >coverage/$$name.log 2>&1 || \
	    { grep -E -B2 -A20 '^(--- FAIL|FAIL|panic)' coverage/$$name.log | tail -60; echo "$$name: tests failed (coverage/$$name.log)"; exit 1; }; \
	  pct=$$($(GO) tool cover -func=coverage/$$name.out | awk '/^total:/ {sub("%","",$$3); print $$3}'); \
	  printf "%-12s %6s%%\n" "$$name" "$$pct"; \
	  awk -v p="$$pct" -v min=$(COVER_MIN) 'BEGIN { exit !(p+0 < min) }' && { echo "  below $(COVER_MIN)%"; fail=1; } || true; \
	done; exit $$fail

bench: build postgres ## benchmarks: kit overhead, the floor and reference ratios (server-postgres, pgbench), round trips, memory, each server's own
	@# The reference servers some benchmarks compare against (tools/bench-ref/package.json).
	@npm ci --prefix tools/bench-ref --no-audit --no-fund --loglevel=error >/dev/null
	$(GO) test -run '^$$' -bench . -skip WebhookLoad -benchmem -benchtime=$(BENCHTIME) ./shared/kit/internal/engine/ ./shared/pgcall/ $(PKGS)

bench-webhooks: build ## the avinode webhook load run: 10 000 events from 32 senders, duplicates, a receiver restart, both stores
	$(GO) test -run '^$$' -bench WebhookLoad -benchtime 1x -timeout 30m ./servers/avinode/cmd/avinode-mcp/

docs: ## regenerate each server's reference section in docs/<server>.md from its definitions
	@for s in $(SERVERS); do \
	  $(GO) test -count=1 -run 'TestDocs' ./servers/$$s/cmd/$$s-mcp/ -args -update >/dev/null && echo "docs/$$s.md"; \
	done

run-devtools: build ## run devtools over stdio on its local default (roots: the working directory)
	./bin/devtools-mcp

run-avinode: build ## run avinode over stdio on its mock marketplace
	./bin/avinode-mcp

run-gmail: build ## run gmail over stdio on its local mailbox
	./bin/gmail-mcp

run-sheets: build ## run sheets over stdio on its local workbook
	./bin/sheets-mcp

run-supabase: build ## run supabase over stdio on its embedded database
	./bin/supabase-mcp

conformance: build ## official MCP conformance suite against devtools over streamable HTTP
	@bash scripts/conformance.sh

inspector: build ## MCP Inspector CLI lists and calls devtools tools over stdio and HTTP
	@bash scripts/inspector.sh

sdk-check: build ## official TypeScript SDK client against the servers (and the kit's test server) over stdio, HTTP and SSE, and their OAuth flow
	@CGO_ENABLED=0 $(GO) build -o bin/kit-testserver ./shared/kit/internal/testserver
	@cd tools/sdk-check && npm ci --no-audit --no-fund --loglevel=error >/dev/null && \
	  node check.mjs && node large.mjs && node kit.mjs && node avinode.mjs && node gmail.mjs && node sheets.mjs && node oauth.mjs

host-check: build ## every server's tools through the OpenAI Agents, Gemini, Anthropic and Vercel AI SDKs and their providers' schema rules, plus an agent-loop round trip per server
	@cd tools/host-check && npm ci --no-audit --no-fund --loglevel=error >/dev/null && \
	  node --test --test-reporter=dot rules.test.mjs && node check.mjs --json ../../bin/host-check.json

images: $(if $(filter host,$(IMAGE_FROM)),build) ## build the five server images with podman or docker (offline: from bin/)
	@command -v $(IMAGE_ENGINE) >/dev/null || { echo "images: $(IMAGE_ENGINE) not found; install podman (apt-get install podman) or docker, or set IMAGE_ENGINE"; exit 1; }
	@if [ "$(IMAGE_FROM)" = host ]; then \
	  [ -n "$(CA_BUNDLE)" ] || { echo "images: no CA bundle found; set CA_BUNDLE=/path/to/ca-certificates.crt"; exit 1; }; \
	  cp "$(CA_BUNDLE)" bin/ca-certificates.crt; \
	fi
	@for s in $(SERVERS); do \
	  name=$(IMAGE_REPO)/$$s-mcp; \
	  old=$$($(IMAGE_ENGINE) image inspect --format '{{.Id}}' $$name:$(IMAGE_TAG) 2>/dev/null || true); \
	  echo "$(IMAGE_ENGINE) build $$name:$(IMAGE_TAG)"; \
	  $(IMAGE_ENGINE) build --quiet $(BUILD_OPTS) --target $$s --build-arg BINARIES=$(IMAGE_FROM) \
	    --build-arg VERSION=$(VERSION) --build-arg COMMIT=$(COMMIT) -t $$name:$(IMAGE_TAG) -t $$name:latest . >/dev/null; \
	  if [ -n "$$old" ]; then $(IMAGE_ENGINE) rmi $$old >/dev/null 2>&1 || true; fi; \
	done

image-names: ## print, per server, the image names `make images` gives it
	@for s in $(SERVERS); do echo "$$s $(IMAGE_REPO)/$$s-mcp:$(IMAGE_TAG) $(IMAGE_REPO)/$$s-mcp:latest"; done

images-check: ## inspect the built images (user, entrypoint, static binary, version labels, size); initialize through a container where one can run
	@$(FLEETCHECK) images --engine $(IMAGE_ENGINE) --version $(VERSION) --commit $(COMMIT) \
	  $(foreach s,$(SERVERS),$(IMAGE_REPO)/$(s)-mcp:$(IMAGE_TAG))

images-clean: ## remove the images `make images` built for this version (and :latest when it is the same image)
	@for s in $(SERVERS); do \
	  name=$(IMAGE_REPO)/$$s-mcp; \
	  id=$$($(IMAGE_ENGINE) image inspect --format '{{.Id}}' $$name:$(IMAGE_TAG) 2>/dev/null) || continue; \
	  latest=$$($(IMAGE_ENGINE) image inspect --format '{{.Id}}' $$name:latest 2>/dev/null || true); \
	  if [ "$$id" = "$$latest" ]; then $(IMAGE_ENGINE) rmi $$name:latest >/dev/null; fi; \
	  $(IMAGE_ENGINE) rmi $$name:$(IMAGE_TAG) >/dev/null; echo "removed $$name:$(IMAGE_TAG)"; \
	done

release-check: ## check .goreleaser.yaml and build every server with its flags for one target per OS
	@$(FLEETCHECK) release --config .goreleaser.yaml

clean: ## remove build and coverage output
	rm -rf bin coverage
