#!/usr/bin/env bash
# make run: cand on the virtual Pi bridged to vcan0, with candump showing the
# simulated peers' frames. On a kernel with SocketCAN it runs here (needs root for
# creating vcan0); on one without (like the build machines) it boots the project's
# qemu VM and leaves you at a shell there, with candump/cansend at hand and the
# metrics endpoint forwarded to http://127.0.0.1:9108/metrics on this host
# (VM_METRICS_PORT=N for another port).
set -euo pipefail
BUILD=${BUILD:-build}
cfg=deploy/sim.yaml
if modprobe -q vcan 2>/dev/null && modprobe -q can-raw 2>/dev/null && command -v candump >/dev/null; then
  "$BUILD/cand" -config "$cfg" &
  pid=$!
  trap 'kill $pid 2>/dev/null; wait $pid' EXIT
  for _ in $(seq 100); do ip link show vcan0 >/dev/null 2>&1 && break; sleep 0.1; done
  echo "cand is bridging vcan0 (metrics: http://127.0.0.1:9108/metrics); candump follows, Ctrl-C stops"
  candump -ta vcan0
else
  # The VM's CPU is emulated and far slower than a Pi's: its demo config
  # (vm/cand-demo.yaml) runs the bus at a rate the emulated driver keeps up with.
  echo "This kernel has no SocketCAN (vcan/can-raw): starting cand in the project's VM."
  exec vm/run-shell.sh
fi
