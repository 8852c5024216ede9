# kdbuild developer targets. `make help` lists them.
GO       ?= go
NVCC     ?= nvcc
BUNDLE   ?= bundle

.PHONY: help test bench lint kernels gpu-bundle fuzz

help:
	@echo "test        go test ./... (the README's test command)"
	@echo "bench       Go benchmarks of every package"
	@echo "lint        gofmt and go vet"
	@echo "kernels     rebuild kernels/kdbuild.fatbin and kernels/image_gen.go with nvcc"
	@echo "gpu-bundle  cross-build test binaries and kdbuild into $(BUNDLE)/ for a GPU machine"

test:
	$(GO) test ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

# kernels and gpu-bundle: see kernels/README section in README.md
