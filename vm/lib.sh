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
