# cand — build, test, run, benchmark. `make help` lists the targets.
SHELL   := /bin/bash
GO      ?= go
BUILD   ?= build
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
export CGO_ENABLED = 0

# Packages whose unit tests also run under qemu-user on 32-bit ARM and arm64: all
# the code that runs on a Pi. Register access, struct layouts and the driver, where
# alignment bites; the owner thread and the metrics (64-bit atomics on a 32-bit
# CPU); the virtual Pi; the configuration and the command. Left out, though they
# pass there: bench (the host's timing), deploy and internal/promtest (the
# deployment files against an amd64 Prometheus), internal/layers (go list's import
# graph, which covers every target already) and vm/vmcheck (it runs in the amd64 VM).
ARM_TEST_PKGS := ./hw/... ./mcp2515/... ./internal/mono/ ./socketcan/ ./bridge/ ./metrics/ ./sim/... \
	./config/ ./canstate/ ./internal/rt/ ./internal/sdnotify/ ./cmd/...
# The daemon's end-to-end tests run there too, but for those that need the virtual
# Pi's clock to keep the host's stalls out of the board's time: a bus stuck for a
# window of board time (error-state and bus-off tests), or peers faster than one
# frame per 10 ms where no frame may be lost. Under qemu-user the kernel reports the
# emulator's (the host's) system call numbers in /proc/self/task/TID/syscall, so
# the clock takes the Go runtime's futex parks for waits on the hardware and lets
# the bus run on; those tests failed now and then, on arm more often than arm64.
ARM_DAEMON_SKIP := TestErrorFrames|TestBusOff|TestFilters|TestListenOnlyMode|TestIntPollWindow

.PHONY: all help build cross deps test test-unit test-arm test-vm check fmt vet run bench bench-quick bench-go clean

all: build

help:
	@echo "make run          cand on the virtual Pi bridged to vcan0, with candump (in a VM if this kernel lacks SocketCAN)"
	@echo "make test         every tier: deps, check, test-unit, cross, test-arm, test-vm"
	@echo "make test-unit    go test ./...: unit tests against the simulator, end-to-end tests of the whole daemon"
	@echo "make test-arm     the driver's, the virtual Pi's and the daemon's tests under qemu-user: linux/arm (GOARM=6, 7), linux/arm64"
	@echo "make test-vm      cand with real SocketCAN (vcan) in a qemu VM: cangen, cansequence, floods, link down/up, SIGTERM; socketcan's kernel tests (minutes)"
	@echo "make check        fmt and vet"
	@echo "make fmt          fail if gofmt would change a tracked Go file"
	@echo "make vet          go vet ./..."
	@echo "make bench        pipeline + SPI engine benchmark on the virtual Pi (~6 min): table, JSON, SVG in $(BUILD)/bench"
	@echo "make bench-quick  the same with short scenarios (under a minute)"
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
	GOARCH=arm GOARM=6 $(GO) test -count=1 -exec qemu-arm-static -skip '$(ARM_DAEMON_SKIP)' ./daemon/
	GOARCH=arm GOARM=7 $(GO) test -count=1 -exec qemu-arm-static $(ARM_TEST_PKGS)
	GOARCH=arm GOARM=7 $(GO) test -count=1 -exec qemu-arm-static -skip '$(ARM_DAEMON_SKIP)' ./daemon/
	GOARCH=arm64 $(GO) test -count=1 -exec qemu-aarch64-static $(ARM_TEST_PKGS)
	GOARCH=arm64 $(GO) test -count=1 -exec qemu-aarch64-static -skip '$(ARM_DAEMON_SKIP)' ./daemon/

test-vm: build
	VM_TIMEOUT=$${VM_TIMEOUT:-600} BUILD=$(abspath $(BUILD)) sh vm/run-test.sh

run: build
	@BUILD=$(abspath $(BUILD)) tools/run.sh

# The benchmark (docs/BENCHMARKS.md): the whole pipeline on the virtual Pi at 100 %
# bus load (125k/500k/1M, INT poll window on/off, 1M with stress-ng on the other
# core, 1M on host time), isolated frames and bursts of 3, and the SPI engine
# polling vs sleeping. Prints
# the Markdown table; writes $(BUILD)/bench/bench.json and rx_end_to_end.svg.
# bench: 60 s for the main 1 Mbit/s scenarios, 20 s for the others (~5 minutes);
# bench-quick: under a minute. bench-go: the Go benchmarks of the hot paths.
bench: build
	$(BUILD)/cand bench -config deploy/sim.yaml -out $(BUILD)/bench

bench-quick: build
	$(BUILD)/cand bench -quick -config deploy/sim.yaml -out $(BUILD)/bench

bench-go:
	$(GO) test -run '^$$' -bench . -benchmem ./hw/... ./metrics/ ./sim/... ./socketcan/ ./internal/mono/

clean:
	rm -rf $(BUILD)
