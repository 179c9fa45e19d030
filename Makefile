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

.PHONY: all help build cross deps test test-unit test-arm test-vm check fmt vet run bench bench-quick bench-check bench-go clean

all: build

help:
	@echo "make run          cand on the virtual Pi bridged to vcan0, with candump (in a VM if this kernel lacks SocketCAN)"
	@echo "make test         every tier: deps, check, test-unit, cross, test-arm, test-vm"
	@echo "make test-unit    go test ./...: unit tests against the simulator, end-to-end tests of the whole daemon"
	@echo "make test-arm     the hardware and driver packages' tests under qemu-user: linux/arm (GOARM=6, 7), linux/arm64"
	@echo "make test-vm      cand with real SocketCAN (vcan) in a qemu VM, checked with candump and cangen (minutes)"
	@echo "make check        fmt and vet"
	@echo "make fmt          fail if gofmt would change a tracked Go file"
	@echo "make vet          go vet ./..."
	@echo "make bench        pipeline + SPI engine benchmark on the virtual Pi (~15 min): table, JSON, SVG in $(BUILD)/bench"
	@echo "make bench-quick  the same with short scenarios (a few minutes)"
	@echo "make bench-check  bench-quick compared with bench/baseline.json: fails naming every scenario that got worse"
	@echo "make bench-go     Go benchmarks of the hot paths (SPI engine, GPIO, metrics, chip model)"
	@echo "make build        $(BUILD)/cand, static (also: make, make all)"
	@echo "make cross        static builds for linux/arm (GOARM=6, 7) and linux/arm64; go vet for arm (GOARM=6) and arm64"
	@echo "make deps         install the Debian packages the tests use (as root)"
	@echo "make clean        remove $(BUILD)"
	@echo "make help         this list"

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

# The benchmark (docs/BENCHMARKS.md): the whole pipeline on the virtual Pi at 100 %
# bus load (125k/500k/1M, INT poll window on/off, 1M with stress-ng on the other
# core, 1M on host time), isolated frames and bursts of 3, the workloads of a real
# bus (DLC 0/1/4, 29-bit IDs, stuffing, a vehicle mix, errors, TX, two controllers,
# loopback) each also driven the kernel mcp251x driver's way, and the SPI engine
# polling vs sleeping. Prints
# the Markdown table; writes $(BUILD)/bench/bench.json and rx_end_to_end.svg.
# bench: 60 s for the main 1 Mbit/s scenarios, 20 s for the others (~15 minutes);
# bench-quick: a few minutes. bench-go: the Go benchmarks of the hot paths.
bench: build
	$(BUILD)/cand bench -config deploy/sim.yaml -out $(BUILD)/bench

bench-quick: build
	$(BUILD)/cand bench -quick -config deploy/sim.yaml -out $(BUILD)/bench

# bench-check: more frames lost or more SPI bytes per frame than the committed
# baseline (exact), or a stage's p50 up by more than 50 % + 5 µs, fails.
# Refresh the baseline with: make bench-quick && cp $(BUILD)/bench/bench.json bench/baseline.json
bench-check: build
	$(BUILD)/cand bench -quick -config deploy/sim.yaml -out $(BUILD)/bench -check bench/baseline.json

bench-go:
	$(GO) test -run '^$$' -bench . -benchmem ./hw/... ./metrics/ ./sim/... ./socketcan/ ./internal/mono/

clean:
	rm -rf $(BUILD)
