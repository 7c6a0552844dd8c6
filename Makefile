# mcp-fleet — build, test, lint, run, bench.
# Every target works offline once modules are downloaded; `make help` lists them.

SHELL        := bash
.SHELLFLAGS  := -eu -o pipefail -c
GO           ?= go
SERVERS      := devtools avinode gmail sheets supabase
MODULES      := shared $(addprefix servers/,$(SERVERS))
PKGS         := $(addsuffix /...,$(addprefix ./,$(MODULES)))
VERSION      ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT       ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
LDFLAGS      := -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT)
STATICCHECK  := honnef.co/go/tools/cmd/staticcheck@v0.8.2
COVER_MIN    ?= 80
BENCHTIME    ?= 1s

.PHONY: help build test lint cover bench bench-webhooks docs run-devtools run-avinode run-sheets run-supabase conformance inspector sdk-check postgres clean

help: ## list targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

build: ## build every server into bin/
	@mkdir -p bin
	@for s in $(SERVERS); do \
	  echo "go build bin/$$s-mcp"; \
	  CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/$$s-mcp ./servers/$$s/cmd/$$s-mcp; \
	done

postgres: ## make sure PostgreSQL binaries are installed (tests start their own throwaway cluster)
	@bash scripts/ensure-postgres.sh

test: postgres ## run every module's tests with the race detector
	$(GO) test -race -count=1 $(PKGS)

lint: ## gofmt check, go vet, staticcheck
	@out=$$(gofmt -l $(MODULES)); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) run $(STATICCHECK) $(PKGS)

cover: postgres ## per-module statement coverage; fails under $(COVER_MIN)%
	@mkdir -p coverage; fail=0; \
	for m in $(MODULES); do \
	  name=$$(basename $$m); \
	  $(GO) test -count=1 -coverpkg=./$$m/... -coverprofile=coverage/$$name.out ./$$m/... >/dev/null; \
	  pct=$$($(GO) tool cover -func=coverage/$$name.out | awk '/^total:/ {sub("%","",$$3); print $$3}'); \
	  printf "%-12s %6s%%\n" "$$name" "$$pct"; \
	  awk -v p="$$pct" -v min=$(COVER_MIN) 'BEGIN { exit !(p+0 < min) }' && { echo "  below $(COVER_MIN)%"; fail=1; } || true; \
	done; exit $$fail

bench: build ## benchmarks: kit overhead, the floor ratios, round trips, memory, each server's own
	$(GO) test -run '^$$' -bench . -skip WebhookLoad -benchmem -benchtime=$(BENCHTIME) ./shared/kit/ ./shared/pgcall/ $(PKGS)

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

run-sheets: build ## run sheets over stdio on its local workbook
	./bin/sheets-mcp

run-supabase: build ## run supabase over stdio on its embedded database
	./bin/supabase-mcp

conformance: build ## official MCP conformance suite against devtools over streamable HTTP
	@bash scripts/conformance.sh

inspector: build ## MCP Inspector CLI lists and calls devtools tools over stdio and HTTP
	@bash scripts/inspector.sh

sdk-check: build ## official TypeScript SDK client against the servers (and the kit's test server) over stdio, HTTP and SSE
	@CGO_ENABLED=0 $(GO) build -o bin/kit-testserver ./shared/kit/internal/testserver
	@cd tools/sdk-check && npm ci --no-audit --no-fund --loglevel=error >/dev/null && \
	  node check.mjs && node kit.mjs && node avinode.mjs && node gmail.mjs && node sheets.mjs

clean: ## remove build and coverage output
	rm -rf bin coverage
