# dtree's build and check targets; readme/dev.md says what each one is for.
# `make test` is what CI runs (.ci/run). Tools run with `go run pkg@version`,
# so nothing needs installing by hand.

GO ?= go
GOFMT ?= gofmt
FUZZTIME ?= 20s
# How long go test minimizes each new input the fuzzer finds (Go's default
# is 60s). With the default, a run of FUZZTIME=20s spent all but the first
# seconds minimizing its first find, at 0 execs/s.
FUZZMINIMIZE ?= 5s
# v0.8.2 is staticcheck 2026.2.2, the newest release. 2025.1.1 (v0.6.1)
# predates Go 1.26, which needs 2026.1 (v0.7.0) or later. The module proxy
# resolves only the semver name, not the "2026.2.2" tag.
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
# actionlint checks the workflows: dtree's own, which runs action.yml (so
# actionlint checks the action's inputs and outputs through it), and the
# examples readme/ci.md shows.
ACTIONLINT ?= github.com/rhysd/actionlint/cmd/actionlint@v1.7.12
WORKFLOWS = .github/workflows/*.yml testdata/ci/workflow.yml testdata/ci/fleet.yml testdata/ci/fork-matrix.yml

.DEFAULT_GOAL := build

.PHONY: build test race vet fmt-check lint tidy-check actionlint e2e golden fuzz bench conformance conformance-latest clean

build:
	$(GO) build -o bin/dtree ./cmd/dtree

# The race detector needs cgo, so a C compiler; where there is none (a
# machine with only Go), the tests run without it, and say so. internal/cli's
# end-to-end scripts take 5-9 minutes under -race on 2 busy cores, near go
# test's default 10m timeout, where testscript kills the command it is in:
# 30m leaves room without hiding a hang for long.
test: fmt-check vet
	@if [ "$$($(GO) env CGO_ENABLED)" = 1 ] && command -v "$$($(GO) env CC)" >/dev/null 2>&1; then \
		echo "$(GO) test -race -timeout 30m ./..."; $(GO) test -race -timeout 30m ./...; \
	else \
		echo "make test: no C compiler for the race detector (it needs cgo); running the tests without -race"; \
		echo "$(GO) test -timeout 30m ./..."; $(GO) test -timeout 30m ./...; \
	fi

race:
	$(GO) test -race ./...

vet:
	$(GO) vet ./...

# Lists the tracked .go files that gofmt would change, and fails if any.
fmt-check:
	@files=$$(git ls-files '*.go'); \
	if [ -z "$$files" ]; then exit 0; fi; \
	out=$$($(GOFMT) -l $$files); \
	if [ -n "$$out" ]; then \
		echo "gofmt needed on:"; echo "$$out"; exit 1; \
	fi

# CI runs it (.ci/run): go vet, gofmt, staticcheck, go.mod tidy, actionlint.
lint: vet fmt-check tidy-check actionlint
	$(GO) run $(STATICCHECK) ./...

tidy-check:
	$(GO) mod tidy -diff

actionlint:
	$(GO) run $(ACTIONLINT) $(WORKFLOWS)

e2e:
	$(GO) test -run TestScript ./internal/cli/...

# Rewrites the golden files and testscript expectations from the current
# output; review the diff before committing it.
golden:
	$(GO) test ./internal/cli/ -run 'TestGolden|TestScript' -update

# Each fuzz target in turn: `go test -fuzz` takes one target and one package
# at a time. FUZZTIME=5m make fuzz for a longer run.
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzFromCSV$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./internal/document
	$(GO) test -run '^$$' -fuzz '^FuzzFromJSON$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./internal/document
	$(GO) test -run '^$$' -fuzz '^FuzzFromYAML$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./internal/document
	$(GO) test -run '^$$' -fuzz '^FuzzFromDrawio$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./internal/document
	$(GO) test -run '^$$' -fuzz '^FuzzFromMermaid$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./internal/document
	$(GO) test -run '^$$' -fuzz '^FuzzRead$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./internal/document
	$(GO) test -run '^$$' -fuzz '^FuzzCSVScanner$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./internal/document
	$(GO) test -run '^$$' -fuzz '^FuzzJSONDecode$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./internal/document
	$(GO) test -run '^$$' -fuzz '^FuzzFindObjects$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./internal/response
	$(GO) test -run '^$$' -fuzz '^FuzzParseDecision$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./internal/response
	$(GO) test -run '^$$' -fuzz '^FuzzTraceFrom$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./internal/export
	$(GO) test -run '^$$' -fuzz '^FuzzReadEvents$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./internal/runlog
	$(GO) test -run '^$$' -fuzz '^FuzzReadCarried$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./internal/run
	$(GO) test -run '^$$' -fuzz '^FuzzYAMLRoundTrip$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./internal/export
	$(GO) test -run '^$$' -fuzz '^FuzzDrawioRun$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./internal/export
	$(GO) test -run '^$$' -fuzz '^FuzzMermaidChartRoundTrip$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./internal/export
	$(GO) test -run '^$$' -fuzz '^FuzzDecoders$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./internal/agent
	$(GO) test -run '^$$' -fuzz '^FuzzParseAnswers$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./internal/replay
	$(GO) test -run '^$$' -fuzz '^FuzzExpand$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./internal/vars
	$(GO) test -run '^$$' -fuzz '^FuzzParseCommand$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./internal/vars

# dtree against the real agent CLIs, installed from npm into a cache, with
# a mock model server on 127.0.0.1 (.ci/conformance, readme/clis.md).
# Skips, exit 0, when npm cannot install them.
conformance:
	bash .ci/conformance

# The same against the newest version npm serves of each CLI, in a cache of
# its own; prints the versions it ran. Not in CI: it depends on what npm
# serves that day. It is how a pin above is moved (readme/clis.md).
conformance-latest:
	CONFORMANCE_LATEST=1 bash .ci/conformance

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./internal/...
	$(GO) run ./internal/testchart/benchimport
	$(GO) run ./internal/testchart/benchrun
	$(GO) run ./internal/testchart/benchcalls
	$(GO) run ./internal/testchart/benchlong
	$(GO) run ./internal/testchart/benchstream
	$(GO) run ./internal/testchart/benchfork

clean:
	rm -rf bin
