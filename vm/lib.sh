# Shared helpers for the VM scripts (sourced, not run).

# The Debian packages the VM tier needs on the host (Debian 12).
VM_PACKAGES="qemu-system-x86 linux-image-amd64 busybox-static can-utils cpio"

vm_die() { echo "vm: $*" >&2; exit 1; }

# vm_ensure_packages installs whichever of VM_PACKAGES is missing (apt-get update once).
vm_ensure_packages() {
	missing=""
	for p in $VM_PACKAGES; do
		dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null | grep -qx installed || missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	[ "$(id -u)" = 0 ] || vm_die "missing Debian packages:$missing; install them as root: apt-get install -y --no-install-recommends$missing"
	echo "vm: installing$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >&2 || vm_die "apt-get update failed; is the Debian mirror reachable?"
	# shellcheck disable=SC2086
	apt-get install -y -q --no-install-recommends $missing >&2 || vm_die "apt-get install$missing failed"
}

# vm_kernel_version prints the newest kernel version that has both /boot/vmlinuz-V
# and /lib/modules/V/kernel.
vm_kernel_version() {
	for k in $(ls /boot/vmlinuz-* 2>/dev/null | sed 's|^/boot/vmlinuz-||' | sort -rV); do
		if [ -d "/lib/modules/$k/kernel" ]; then
			echo "$k"
			return 0
		fi
	done
	vm_die "no kernel in /boot with matching /lib/modules/<version>/kernel; install linux-image-amd64"
}

# vm_accel prints qemu's accelerator option: TCG unless VM_ACCEL says otherwise
# (VM_ACCEL=kvm). Not automatic: a /dev/kvm that opens is no proof that KVM runs
# guests (on this build machine a KVM guest hung with no output until the timeout).
vm_accel() {
	echo "-accel ${VM_ACCEL:-tcg}"
}

# vm_boot LOG TIMEOUT MEMORY KERNEL INITRD APPEND boots KERNEL with INITRD and the
# command line APPEND in qemu (vm_accel, VM_SMP CPUs [2], MEMORY MiB, the serial
# console on stdio, no network, no reboot), killed after TIMEOUT seconds. The
# console goes to LOG, its VMTEST and vm: lines to stdout as they come.
vm_boot() {
	# shellcheck disable=SC2046
	timeout -k 5 "$2" qemu-system-x86_64 $(vm_accel) -smp "${VM_SMP:-2}" -m "$3" \
		-display none -monitor none -serial stdio -no-reboot -nic none \
		-kernel "$4" -initrd "$5" -append "$6" \
		</dev/null 2>&1 | sed -u 's/\r$//' | tee "$1" | grep --line-buffered -E '^(VMTEST|vm:)' || true
}

# vm_verdict CONSOLE CHECKS "CHECK..." TIMEOUT SUMMARY [FAILS] is the result of a
# run from the VMTEST lines in CHECKS (the console log CONSOLE, or what was made
# of it): each expected check must have a VMTEST PASS or SKIP line; any VMTEST
# FAIL (in CHECKS, or among the lines FAILS adds: failures found outside the VM),
# a check with no line, or no VMTEST DONE (the VM stopped or ran out of its
# TIMEOUT seconds) fails. Prints the skipped checks, the failures with CONSOLE's
# last 40 lines, SUMMARY, and last "vm: N passed, M failed, K skipped"; returns 1
# on any failure. Sets passed, failed, skipped, report, fails, skips and vv_*.
vm_verdict() {
	vv_console=$1 vv_checks=$2 vv_timeout=$4
	passed=0 failed=0 skipped=0 report=""
	for c in $3; do
		if grep -qx "VMTEST PASS $c" "$vv_checks"; then
			passed=$((passed + 1))
		elif grep -q "^VMTEST SKIP $c:" "$vv_checks"; then
			skipped=$((skipped + 1))
		elif ! grep -q "^VMTEST FAIL $c:" "$vv_checks"; then
			failed=$((failed + 1))
			report="$report
VMTEST MISSING $c (no PASS, FAIL or SKIP line)"
		fi
	done
	fails=$(grep '^VMTEST FAIL' "$vv_checks" || true)
	[ -z "${6:-}" ] || fails="$fails${fails:+
}$6"
	if [ -n "$fails" ]; then
		failed=$((failed + $(printf '%s\n' "$fails" | wc -l)))
		report="$report
$fails"
	fi
	if ! grep -qx 'VMTEST DONE' "$vv_checks"; then
		failed=$((failed + 1))
		report="$report
VMTEST MISSING vm/done: the VM stopped or timed out ($vv_timeout s) before its end"
	fi
	skips=$(grep '^VMTEST SKIP' "$vv_checks" || true)
	[ -z "$skips" ] || printf 'vm: skipped:\n%s\n' "$skips"
	if [ "$failed" -gt 0 ]; then
		echo "vm: failures:$report"
		echo "vm: last 40 lines of $vv_console:"
		tail -n 40 "$vv_console" | sed 's/^/    /'
	fi
	echo "$5"
	echo "vm: $passed passed, $failed failed, $skipped skipped"
	[ "$failed" = 0 ]
}
