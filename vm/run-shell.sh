#!/bin/sh
# run-shell.sh — make run on a host without SocketCAN: boots the VM interactively
# (serial console on this terminal), starts cand on the demo config, shows some of
# its frames and whether any was lost, and leaves you at a busybox shell with
# candump/cansend/cangen/ip. cand's metrics port 9108 in the VM is forwarded to
# 127.0.0.1:$VM_METRICS_PORT on the host. Leave with 'exit' (powers the VM off) or
# Ctrl-A then X. Standard input may be a script (the shell reads it, then 'exit').
# Environment: BUILD [<repo>/build], VM_CAND_CONFIG [vm/cand-demo.yaml], VM_SMP [2],
# VM_ACCEL [tcg], VM_METRICS_PORT [9108].
set -eu
. "$(dirname "$0")/common.sh"
config=${VM_CAND_CONFIG:-$here/cand-demo.yaml}
port=${VM_METRICS_PORT:-9108}
[ -f "$config" ] || vm_die "$config: no such file (set VM_CAND_CONFIG)"

vm_ensure_packages
(cd "$repo" && CGO_ENABLED=0 go build -o "$BUILD/cand" ./cmd/cand) || vm_die "CGO_ENABLED=0 go build ./cmd/cand failed"
(cd "$repo" && CGO_ENABLED=0 go build -o "$out/vmcheck" ./vm/vmcheck) || vm_die "building vm/vmcheck failed"
kernel=$(sh "$here/build-initramfs.sh" "$out/initramfs-shell.cpio.gz" --cand "$BUILD/cand" --config "$config" --extra "$out/vmcheck")

echo "vm: booting (TCG: ~10 s). Metrics: http://127.0.0.1:$port/metrics. Leave: 'exit' or Ctrl-A then X."
# shellcheck disable=SC2046
exec qemu-system-x86_64 $(vm_accel) -smp "${VM_SMP:-2}" -m 512 -nographic -no-reboot \
	-nic user,model=e1000,hostfwd=tcp:127.0.0.1:"$port"-:9108 \
	-kernel "$kernel" -initrd "$out/initramfs-shell.cpio.gz" \
	-append "console=ttyS0 quiet panic=-1 cand.mode=shell cand.hostport=$port"
