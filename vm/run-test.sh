#!/bin/sh
# run-test.sh — the real-SocketCAN test tier (make test-vm).
#
# Builds cand and vmcheck (static), the initramfs, boots it in qemu (TCG unless KVM is
# usable) with cand.mode=smoke,test, and turns the serial log into pass/fail: exit 0
# only if every expected "VMTEST PASS" line appears, no "VMTEST FAIL", and "VMTEST DONE".
# The last line is "vm: N passed, M failed".
#
# Options:  --smoke-only   boot only the VM self-test (no cand needed)
# Environment:
#   BUILD           build directory [<repo>/build]
#   VM_CAND_CONFIG  cand's simulator config [vm/cand-vm.yaml]
#   VM_PERIODIC     vmcheck -periodic spec for the config's periodic peer [0x100:min=5:dlc=8:counter=8: the sim peers put a big-endian uint64 counter in 8-byte frames]
#   VM_REQ VM_ANS VM_N  request ID, answer ID, frame count [0x123 0x124 1000]
#   VM_TIMEOUT      hard limit for the VM in seconds [240]
#   VM_SMP          guest CPUs [2]
#   VM_ACCEL        qemu accelerator [tcg]; kvm where KVM is known to work
set -eu
. "$(dirname "$0")/common.sh"
modes=smoke,test
[ "${1:-}" = --smoke-only ] && modes=smoke
config=${VM_CAND_CONFIG:-$here/cand-vm.yaml}
periodic=${VM_PERIODIC:-0x100:min=5:dlc=8:counter=8}
req=${VM_REQ:-0x123} ans=${VM_ANS:-0x124} n=${VM_N:-1000}
start=$(date +%s)

vm_ensure_packages
command -v go >/dev/null || vm_die "go not found in PATH"
extra_fail=""
(cd "$repo" && CGO_ENABLED=0 go build -o "$out/vmcheck" ./vm/vmcheck) || vm_die "building vm/vmcheck failed"
initrd_args="--extra $out/vmcheck"
if [ "$modes" != smoke ]; then
	if (cd "$repo" && CGO_ENABLED=0 go build -o "$BUILD/cand" ./cmd/cand) >"$out/cand-build.log" 2>&1; then
		initrd_args="$initrd_args --cand $BUILD/cand --config $config"
		[ -f "$config" ] || vm_die "$config: no such file (set VM_CAND_CONFIG)"
	else
		echo "vm: CGO_ENABLED=0 go build ./cmd/cand failed; running the smoke test only:" >&2
		sed 's/^/    /' "$out/cand-build.log" >&2
		extra_fail="VMTEST FAIL test/build: CGO_ENABLED=0 go build ./cmd/cand failed (see above)"
		modes=smoke
	fi
fi
# shellcheck disable=SC2086
kernel=$(sh "$here/build-initramfs.sh" "$out/initramfs.cpio.gz" $initrd_args)

log=$out/test.log
echo "vm: booting $kernel, cand.mode=$modes (log: $log)"
t0=$(date +%s)
# shellcheck disable=SC2046
timeout -k 5 "${VM_TIMEOUT:-240}" qemu-system-x86_64 $(vm_accel) -smp "${VM_SMP:-2}" -m 512 \
	-display none -monitor none -serial stdio -no-reboot -nic none \
	-kernel "$kernel" -initrd "$out/initramfs.cpio.gz" \
	-append "console=ttyS0 quiet panic=-1 cand.mode=$modes cand.periodic=$periodic cand.req=$req cand.ans=$ans cand.n=$n" \
	</dev/null 2>&1 | tr -d '\r' | tee "$log" | grep --line-buffered -E '^(VMTEST|vm:)' || true
t1=$(date +%s)

# The checks each scenario must pass (the names vm/init.sh and vmcheck print).
expected="vm/modules"
case ,$modes, in *,smoke,*)
	expected="$expected smoke/vcan-up smoke/dump smoke/periodic-0x100 smoke/answers-0x123 smoke/no-error-frames smoke/vcan-del" ;;
esac
case ,$modes, in *,test,*)
	pid=${periodic%%[:,]*}
	expected="$expected test/version test/check-config test/vcan0-up test/cand-exit test/vcan0-removed test/dump"
	expected="$expected test/periodic-$(printf '%#x' "0x${pid#0x}") test/answers-$(printf '%#x' "$req") test/no-error-frames" ;;
esac

passed=0 failed=0 report=""
for c in $expected; do
	if grep -qx "VMTEST PASS $c" "$log"; then
		passed=$((passed + 1))
	elif ! grep -q "^VMTEST FAIL $c:" "$log"; then
		failed=$((failed + 1))
		report="$report
VMTEST MISSING $c (no PASS or FAIL line)"
	fi
done
fails=$(grep '^VMTEST FAIL' "$log" || true)
[ -z "$extra_fail" ] || fails="$fails${fails:+
}$extra_fail"
if [ -n "$fails" ]; then
	failed=$((failed + $(printf '%s\n' "$fails" | wc -l)))
	report="$report
$fails"
fi
if ! grep -qx 'VMTEST DONE' "$log"; then
	failed=$((failed + 1))
	report="$report
VMTEST MISSING vm/done: the VM stopped or timed out (${VM_TIMEOUT:-240} s) before its end"
fi

if [ "$failed" -gt 0 ]; then
	echo "vm: failures:$report"
	echo "vm: last 40 lines of $log:"
	tail -n 40 "$log" | sed 's/^/    /'
fi
boot=$(sed -n 's/^vm: init started at \([0-9.]*\) s.*/\1/p' "$log" | head -n 1)
echo "vm: VM ran $((t1 - t0)) s (init reached at ${boot:-?} s guest uptime), total $(($(date +%s) - start)) s"
echo "vm: $passed passed, $failed failed"
[ "$failed" = 0 ]
