#!/bin/sh
# run-test.sh — the real-SocketCAN test tier (make test-vm).
#
# Builds cand, vmcheck and the socketcan package's test binary (static), the
# initramfs, boots it in qemu (TCG unless VM_ACCEL says otherwise) with
# cand.mode=smoke,kernel,test,seq (vm/init.sh), and turns the serial log into
# pass/fail: exit 0 only if every expected "VMTEST PASS" line appears (or a
# "VMTEST SKIP" with its reason), no "VMTEST FAIL", and "VMTEST DONE". The kernel
# mode's go test -test.v lines become one check per test here: a test that skips
# in the VM fails, since this kernel has what the build machine's lacks.
# The last line is "vm: N passed, M failed, K skipped".
#
# Options:  --smoke-only   boot only the VM self-test (no cand needed)
# Environment:
#   BUILD           build directory [<repo>/build]
#   VM_CAND         a cand binary (static, linux/amd64) to test instead of building ./cmd/cand
#   VM_CAND_CONFIG  cand's simulator config [vm/cand-vm.yaml]
#   VM_MODES        the scenarios, in order [smoke,kernel,test,seq,slcan]
#   VM_PERIODIC     vmcheck -periodic spec for the config's periodic peer [0x200:min=5:dlc=8:counter=8: the sim peers put a big-endian uint64 counter in 8-byte frames]
#   VM_REQ VM_ANS VM_N  request ID, answer ID, frame count [0x123 0x122 1000]
#   VM_SEQN         frames cansequence sends [300]
#   VM_FLOOD        frames in each cangen -g 0 flood [1000]
#   VM_TIMEOUT      hard limit for the VM in seconds [240]
#   VM_SMP          guest CPUs [2]
#   VM_ACCEL        qemu accelerator [tcg]; kvm where KVM is known to work
set -eu
. "$(dirname "$0")/common.sh"
modes=${VM_MODES:-smoke,kernel,test,seq,slcan}
[ "${1:-}" = --smoke-only ] && modes=smoke
config=${VM_CAND_CONFIG:-$here/cand-vm.yaml}
periodic=${VM_PERIODIC:-0x200:min=5:dlc=8:counter=8}
req=${VM_REQ:-0x123} ans=${VM_ANS:-0x122} n=${VM_N:-1000}
seqn=${VM_SEQN:-300} flood=${VM_FLOOD:-1000}
start=$(date +%s)
has_mode() { case ,$modes, in *,$1,*) return 0 ;; esac; return 1; }

vm_ensure_packages
command -v go >/dev/null || vm_die "go not found in PATH"
extra_fail=""
(cd "$repo" && CGO_ENABLED=0 go build -o "$out/vmcheck" ./vm/vmcheck) || vm_die "building vm/vmcheck failed"
initrd_args="--extra $out/vmcheck"
kernel_tests=""
if has_mode kernel; then
	if (cd "$repo" && CGO_ENABLED=0 go test -c -o "$out/socketcan.test" ./socketcan/) >"$out/socketcan-build.log" 2>&1 &&
		kernel_tests=$("$out/socketcan.test" -test.list Kernel) && [ -n "$kernel_tests" ]; then
		initrd_args="$initrd_args --extra $out/socketcan.test"
	else
		echo "vm: go test -c ./socketcan/ (or its -test.list Kernel) failed; no kernel tests:" >&2
		sed 's/^/    /' "$out/socketcan-build.log" >&2
		extra_fail="VMTEST FAIL kernel/build: go test -c ./socketcan/ failed (see above)"
		modes=$(echo ",$modes," | sed 's/,kernel,/,/; s/^,//; s/,$//')
	fi
fi
if [ "$modes" != smoke ]; then
	cand=${VM_CAND:-$BUILD/cand}
	if [ -n "${VM_CAND:-}" ] || (cd "$repo" && CGO_ENABLED=0 go build -o "$BUILD/cand" ./cmd/cand) >"$out/cand-build.log" 2>&1; then
		initrd_args="$initrd_args --cand $cand --config $config --extra $here/cand-slcan.yaml=/etc/cand-slcan.yaml --extra $here/cand-slcan-overflow.yaml=/etc/cand-slcan-overflow.yaml"
		[ -f "$config" ] || vm_die "$config: no such file (set VM_CAND_CONFIG)"
	else
		echo "vm: CGO_ENABLED=0 go build ./cmd/cand failed; running the smoke test only:" >&2
		sed 's/^/    /' "$out/cand-build.log" >&2
		extra_fail="${extra_fail:+$extra_fail
}VMTEST FAIL test/build: CGO_ENABLED=0 go build ./cmd/cand failed (see above)"
		modes=smoke
	fi
fi
# shellcheck disable=SC2086
kernel=$(sh "$here/build-initramfs.sh" "$out/initramfs.cpio.gz" $initrd_args)

log=$out/test.log
echo "vm: booting $kernel, cand.mode=$modes (log: $log)"
t0=$(date +%s)
vm_boot "$log" "${VM_TIMEOUT:-240}" 512 "$kernel" "$out/initramfs.cpio.gz" \
	"console=ttyS0 quiet panic=-1 cand.mode=$modes cand.periodic=$periodic cand.req=$req cand.ans=$ans cand.n=$n cand.seqn=$seqn cand.flood=$flood"
t1=$(date +%s)

# The kernel mode's go test -test.v output, one check per test: "--- PASS: T",
# "--- FAIL: T", "--- SKIP: T"; the indented lines since T's "=== RUN" (go test -v
# streams t.Log output as it comes) are the reason.
checks=$out/checks.log
awk '
	/^VMTEST BEGIN kernel/ { on = 1; print; next }
	/^VMTEST GOTEST END/ { on = 0; next }
	!on { print; next }
	/^=== RUN / { why = ""; print "kernel: " $0; next }
	/^    / { line = $0; sub(/^ +/, "", line); why = why " " line; print "kernel: " $0; next }
	/^--- (PASS|FAIL|SKIP): / {
		verdict = $2; sub(":", "", verdict)
		if (verdict == "PASS") print "VMTEST PASS kernel/" $3
		else if (verdict == "FAIL") print "VMTEST FAIL kernel/" $3 ":" why
		else print "VMTEST FAIL kernel/" $3 ": skipped in the VM, whose kernel has CAN:" why
		why = ""
		next
	}
	{ print "kernel: " $0 }
' "$log" >"$checks"

# The checks each scenario must pass (the names vm/init.sh and vmcheck print).
expected="vm/modules"
if has_mode smoke; then
	expected="$expected smoke/vcan-up smoke/dump smoke/periodic-0x100 smoke/answers-0x123 smoke/no-error-frames smoke/vcan-del"
fi
if has_mode kernel; then
	expected="$expected kernel/exit"
	for t in $kernel_tests; do expected="$expected kernel/$t"; done
fi
if has_mode test; then
	pid=${periodic%%[:,]*}
	r=$(printf '%#x' "$req")
	expected="$expected test/version test/check-config test/interfaces-up test/cand-exit test/interfaces-down test/dump"
	expected="$expected test/periodic-$(printf '%#x' "0x${pid#0x}") test/answers-$r test/conservation-$r test/no-error-frames"
fi
if has_mode seq; then
	expected="$expected seq/interfaces-up seq/cansequence"
	for v in cansequence:0x2 flood:0x401 link:0x301; do
		expected="$expected ${v%%:*}/dump ${v%%:*}/answers-${v#*:} ${v%%:*}/conservation-${v#*:}"
	done
	expected="$expected cansequence/no-error-frames flood/no-error-frames flood/overran"
	expected="$expected seq/link-down seq/link-up seq/link-traffic seq/cand-exit seq/interfaces-down seq/unsent-logged"
fi

if has_mode slcan; then
	expected="$expected slcan/netdev-up slcan/kernel-bitrate slcan/status-bitrate slcan/dump slcan/answers-0x123 slcan/conservation-0x123"
	expected="$expected slcan/no-error-frames slcan/isotp slcan/isotp-vcan slcan/link-down slcan/link-up slcan/ip-bitrate slcan/reprogrammed slcan/error-state"
	expected="$expected slcan/bus-off slcan/carrier-back"
	expected="$expected slcan/reprogrammed-250k slcan/state-back slcan/answered-again slcan/cand-exit slcan/netdev-gone"
fi

boot=$(sed -n 's/^vm: init started at \([0-9.]*\) s.*/\1/p' "$log" | head -n 1)
vm_verdict "$log" "$checks" "$expected" "${VM_TIMEOUT:-240}" \
	"vm: VM ran $((t1 - t0)) s (init reached at ${boot:-?} s guest uptime), total $(($(date +%s) - start)) s" "$extra_fail"
