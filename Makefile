# cand — build, test, run, benchmark. `make help` lists the targets.
SHELL   := /bin/bash
GO      ?= go
BUILD   ?= build
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
export CGO_ENABLED = 0

# Packages whose unit tests also run under qemu-user on 32-bit ARM and arm64:
# register access, struct layouts and the driver, where alignment bites.
ARM_TEST_PKGS := ./hw/... ./mcp2515/... ./internal/mono/ ./socketcan/

.PHONY: all help build cross deps test test-unit test-arm test-vm check fmt vet run bench clean

all: build

help:
	@echo "make run          cand on the virtual Pi bridged to vcan0, with candump (in a VM if this kernel lacks SocketCAN)"
	@echo "make test         every tier: format, vet, unit + end-to-end, ARM builds and tests under qemu-user, real SocketCAN in a VM"
	@echo "make bench        Go benchmarks of the hot paths (SPI engine, GPIO, metrics, chip model)"
	@echo "make build        $(BUILD)/cand, static"
	@echo "make cross        static builds for linux/arm (GOARM=6, 7) and linux/arm64"
	@echo "make deps         install the Debian packages the tests use (as root)"

build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BUILD)/cand ./cmd/cand

cross:
	GOOS=linux GOARCH=arm GOARM=6 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BUILD)/cand-armv6 ./cmd/cand
	GOOS=linux GOARCH=arm GOARM=7 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BUILD)/cand-armv7 ./cmd/cand
	GOOS=linux GOARCH=arm64 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BUILD)/cand-arm64 ./cmd/cand
	GOOS=linux GOARCH=arm GOARM=6 $(GO) vet ./...
	GOOS=linux GOARCH=arm64 $(GO) vet ./...

deps:
	tools/install-deps.sh

fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go') 2>/dev/null); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

check: fmt vet

# All tiers. The VM tier boots a Debian kernel with can, can-raw, vcan, vxcan in qemu.
test: deps check test-unit cross test-arm test-vm

test-unit:
	$(GO) test -count=1 ./...

test-arm:
	GOARCH=arm GOARM=6 $(GO) test -count=1 -exec qemu-arm-static $(ARM_TEST_PKGS)
	GOARCH=arm GOARM=7 $(GO) test -count=1 -exec qemu-arm-static $(ARM_TEST_PKGS)
	GOARCH=arm64 $(GO) test -count=1 -exec qemu-aarch64-static $(ARM_TEST_PKGS)

test-vm: build
	VM_TIMEOUT=$${VM_TIMEOUT:-600} BUILD=$(abspath $(BUILD)) sh vm/run-test.sh

run: build
	@BUILD=$(abspath $(BUILD)) tools/run.sh

# Go benchmarks of the hot paths (SPI engine, GPIO, metrics, chip model, codecs).
# The full pipeline benchmark of issue #5 (cand bench) is not written yet.
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./hw/... ./metrics/ ./sim/... ./socketcan/ ./internal/mono/

clean:
	rm -rf $(BUILD)
