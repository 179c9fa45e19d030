#!/bin/sh
# build-rootfs.sh OUT.cpio — the systemd VM's root file system, as a cpio archive
# (newc, uncompressed) that the kernel unpacks into its initramfs rootfs and runs
# /sbin/init (systemd) from: Debian 12 (bookworm) built by mmdebstrap (variant
# minbase) from the host's apt sources, with systemd as PID 1, udev, dbus,
# iproute2, can-utils, kmod, procps; the host kernel's CAN modules (can, can-raw,
# can-dev, vcan, vxcan, veth) with their modules.dep (depmod), so that the unit's
# modprobe works; the units a test VM does not need masked (gettys, timers,
# first-boot prompts). Cached by content hash of its inputs under $BUILD/vm, so
# reruns take a copy. Prints the kernel image to boot it with on stdout.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

[ $# = 1 ] || vm_die "usage: $0 OUT.cpio"
out=$1
vm_ensure_packages
sd_ensure_packages
kver=$(vm_kernel_version)
kdir=/lib/modules/$kver
cache=${BUILD:-$repo/build}/vm
mkdir -p "$cache"

# The guest's packages. dbus: systemctl and logind talk over it; systemd-timesyncd
# is left out (no network).
packages="systemd systemd-sysv udev dbus iproute2 can-utils kmod procps"
modules="can can-raw can-dev vcan vxcan slcan can-isotp veth"
# Units a serial-console test VM does without: logins, periodic jobs, first-boot
# prompts (the machine ID is fixed below), and what looks for hardware it lacks.
masked="getty@tty1.service serial-getty@ttyS0.service console-getty.service
apt-daily.timer apt-daily-upgrade.timer dpkg-db-backup.timer e2scrub_all.timer fstrim.timer
systemd-firstboot.service systemd-tmpfiles-clean.timer systemd-pstore.service
systemd-remount-fs.service systemd-update-utmp.service systemd-update-utmp-runlevel.service
systemd-journal-flush.service systemd-random-seed.service
sys-kernel-debug.mount sys-kernel-tracing.mount dev-hugepages.mount dev-mqueue.mount sys-fs-fuse-connections.mount
systemd-hwdb-update.service ldconfig.service"

modpaths() {
	for m in $modules; do
		modinfo -k "$kver" -F filename "$m" || vm_die "kernel module $m not found for $kver"
		for d in $(modinfo -k "$kver" -F depends "$m" | tr ',' ' '); do modinfo -k "$kver" -F filename "$d"; done
	done | sort -u
}
mods=$(modpaths)

key=$(
	{
		cat "$here/build-rootfs.sh" "$vm/lib.sh"
		echo "$packages|$modules|$masked|$kver"
		apt-cache policy $packages 2>/dev/null | grep -E '^[a-z]|Candidate' || true
		for f in $mods; do sha256sum "$f"; done
	} | sha256sum | cut -c1-16
)
img=$cache/rootfs-$key.cpio
if [ ! -s "$img" ]; then
	root=$(mktemp -d "$cache/rootfs-stage.XXXXXX")
	trap 'rm -rf "$root"' EXIT
	rmdir "$root"
	echo "vm: building the Debian 12 root file system (mmdebstrap minbase + $packages)" >&2
	t0=$(date +%s)
	# The packages named and what they depend on, no recommends; manual pages,
	# locales and info pages are not needed by a test VM.
	mmdebstrap --variant=minbase --include="$(echo $packages | tr ' ' ,)" \
		--aptopt='APT::Install-Recommends "false"' \
		--dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
		--dpkgopt='path-exclude=/usr/share/info/*' \
		bookworm "$root" >"$cache/mmdebstrap.log" 2>&1 ||
		{ tail -n 30 "$cache/mmdebstrap.log" >&2; vm_die "mmdebstrap failed (log: $cache/mmdebstrap.log); is the Debian mirror in the host's apt sources reachable?"; }
	rm -rf "$root"/var/cache/apt/* "$root"/var/lib/apt/lists/*
	# Less for the kernel to unpack at each boot (the TCG guest is slow): the
	# hardware database (udev names no devices here), iconv's modules, the
	# packages' documentation.
	rm -rf "$root"/usr/lib/udev/hwdb.bin "$root"/usr/lib/udev/hwdb.d "$root"/usr/lib/x86_64-linux-gnu/gconv "$root"/usr/share/doc/*

	# The host kernel's modules, at their paths, and their index.
	for f in $mods; do
		mkdir -p "$root$(dirname "$f")"
		cp "$f" "$root$f"
	done
	cp "$kdir"/modules.order "$kdir"/modules.builtin "$kdir"/modules.builtin.modinfo "$root$kdir/" 2>/dev/null || true
	depmod -b "$root" "$kver"

	# A fixed machine ID: no first boot, the journal under one name.
	echo 0b1a7e5c2d3f4a5b6c7d8e9f00112233 >"$root/etc/machine-id"
	echo cand-vm >"$root/etc/hostname"
	# rootfs is already writable; there is nothing to mount from fstab.
	: >"$root/etc/fstab"
	for u in $masked; do ln -sf /dev/null "$root/etc/systemd/system/$u"; done
	# The journal in memory only (/run): no flush to /var at boot.
	mkdir -p "$root/etc/systemd/journald.conf.d"
	printf '[Journal]\nStorage=volatile\n' >"$root/etc/systemd/journald.conf.d/vm.conf"

	(cd "$root" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc --quiet) >"$img.tmp"
	mv "$img.tmp" "$img"
	echo "vm: root file system built in $(($(date +%s) - t0)) s: $img ($(du -m "$img" | cut -f1) MB)" >&2
	ls -t "$cache"/rootfs-*.cpio | tail -n +3 | xargs -r rm -f
fi
if [ "$img" != "$out" ]; then
	ln -f "$img" "$out" 2>/dev/null || cp "$img" "$out"
fi
echo "/boot/vmlinuz-$kver"
