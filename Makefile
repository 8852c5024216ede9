# kdbuild developer targets. `make help` lists them.
GO       ?= go
NVCC     ?= nvcc
BUNDLE   ?= bundle
# Arguments of `make run`, e.g. make run ARGS="../shared/scenes/stanford-bunny.obj --bench 5"
ARGS     ?=
# staticcheck of `make lint`, pinned (the proxy refuses @latest).
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
# Time per fuzz target of `make fuzz`.
FUZZTIME ?= 30s

.PHONY: help build run test test-short bench lint fuzz ci clean kernels gpu-bundle

help:
	@echo "build       go build ./... without cgo, then ./kdbuild (with cgo when a C compiler is there)"
	@echo "run         go run ./cmd/kdbuild \$$ARGS (no ARGS: the built-in default scene)"
	@echo "test        go test ./... (the README's test command)"
	@echo "test-short  go test -short ./... (skips the slowest cases)"
	@echo "bench       Go benchmarks of every package"
	@echo "lint        gofmt, go vet with and without cgo, staticcheck ($(STATICCHECK))"
	@echo "fuzz        every fuzz target for \$$FUZZTIME (default $(FUZZTIME)) each"
	@echo "ci          bash .ci/run: what CI runs (installs nvcc, checks the kernel image)"
	@echo "kernels     rebuild kernels/kdbuild.fatbin and kernels/image_gen.go with nvcc"
	@echo "gpu-bundle  cross-build test binaries and kdbuild into $(BUNDLE)/ for a GPU machine (PKGS=, BASE=)"
	@echo "clean       remove ./kdbuild, build/ and $(BUNDLE)/"

build:
	CGO_ENABLED=0 $(GO) build ./...
	$(GO) build -ldflags "-X main.version=$$(git describe --always --dirty 2>/dev/null || echo dev)" -o kdbuild ./cmd/kdbuild

run:
	$(GO) run ./cmd/kdbuild $(ARGS)

test:
	$(GO) test ./...

test-short:
	$(GO) test -short ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

lint:
	@out=$$(gofmt -l $$(git ls-files --cached --others --exclude-standard '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	CGO_ENABLED=0 $(GO) vet ./...
	$(GO) run $(STATICCHECK) ./cmd/... ./docs/... ./kernels/... ./reduce/... ./scan/... ./scenes/... ./split/...

# Runs each Fuzz function of every package, one at a time (go test -fuzz
# takes one target per run).
fuzz:
	@set -e; for file in $$(grep -rlE '^func Fuzz' --include='*_test.go' .); do \
		dir=$$(dirname $$file); \
		for fn in $$(grep -oE '^func Fuzz[A-Za-z0-9_]+' $$file | cut -d' ' -f2); do \
			echo "== $$dir $$fn for $(FUZZTIME)"; \
			$(GO) test -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(FUZZTIME) $$dir; \
		done; \
	done

ci:
	bash .ci/run

clean:
	rm -rf kdbuild build $(BUNDLE)

# kernels and gpu-bundle: see CONTRIBUTING.md

kernels:
	$(GO) run ./kernels/gen -nvcc $(NVCC)

# Scenes of ../shared/scenes that gpu-bundle copies into $(BUNDLE)/scenes/
# (the last four are small ones that tests read too).
SCENES ?= stanford-bunny.obj conference.obj.gz sponza-dabrovic.obj.gz dragon-19k.obj.gz spot.obj \
	fandisk.obj teapot.obj cow.obj suzanne.obj

# gpu-bundle: PKGS limits the test binaries to these package folders (e.g.
# PKGS="kdtree split"), BASE adds kdbuild_base built from that git revision
# (ab.sh in the bundle compares the two in the same run).
PKGS ?=
BASE ?=

gpu-bundle:
	GO="$(GO)" BUNDLE="$(BUNDLE)" SCENES="$(SCENES)" PKGS="$(PKGS)" BASE="$(BASE)" bash kernels/gen/bundle.sh
