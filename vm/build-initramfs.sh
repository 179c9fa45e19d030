#!/bin/sh
# build-initramfs.sh OUT.cpio.gz [--cand PATH] [--config PATH] [--extra PATH[=/DEST]]...
#
# Builds the test VM's initramfs (cpio newc, gzip): busybox, can-utils and iproute2's
# ip with their shared libraries, the CAN kernel modules (can, can-raw, can-dev, vcan,
# vxcan), veth (the socketcan kernel tests check the vxcan request against it) and
# e1000 for qemu's user networking, /init (vm/init.sh), and the given
# files: --cand → /usr/bin/cand, --config → /etc/cand.yaml, --extra → /usr/bin/NAME
# (or DEST). Installs missing Debian packages first. Results are cached by content
# hash under $BUILD/vm (BUILD defaults to <repo>/build), so reruns are fast.
# Prints the kernel image to boot with this initramfs on stdout.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
. "$here/lib.sh"

usage() { vm_die "usage: $0 OUT.cpio.gz [--cand PATH] [--config PATH] [--extra PATH[=/DEST]]..."; }
[ $# -ge 1 ] || usage
out=$1
shift
cand="" config="" extras=""
while [ $# -gt 0 ]; do
	case $1 in
	--cand) [ $# -ge 2 ] || usage; cand=$2; shift 2 ;;
	--config) [ $# -ge 2 ] || usage; config=$2; shift 2 ;;
	--extra) [ $# -ge 2 ] || usage; extras="$extras $2"; shift 2 ;;
	*) usage ;;
	esac
done
for f in $cand $config; do [ -f "$f" ] || vm_die "$f: no such file"; done
for e in $extras; do [ -f "${e%%=*}" ] || vm_die "${e%%=*}: no such file (--extra)"; done

vm_ensure_packages
kver=$(vm_kernel_version)
kdir=/lib/modules/$kver
cache=${BUILD:-$repo/build}/vm
mkdir -p "$cache"

# The module list in load order: each module's dependencies (modinfo) first.
want="can can-raw can-dev vcan vxcan slcan can-isotp veth e1000"
modfile() {
	f=$(find "$kdir/kernel" -name "$1.ko" -o -name "$1.ko.xz" -o -name "$1.ko.zst" -o -name "$1.ko.gz" | head -n 1)
	[ -n "$f" ] || vm_die "kernel module $1 not found under $kdir/kernel"
	echo "$f"
}
order=""
add_mod() {
	case " $order " in *" $1 "*) return 0 ;; esac
	for d in $(modinfo -k "$kver" -F depends "$(modfile "$1")" | tr ',' ' '); do add_mod "$d"; done
	order="$order $1"
}
for m in $want; do add_mod "$m"; done

# Content hash of everything that goes in.
ipbin=$(command -v ip || true)
case $ipbin in */busybox | "") ipbin="" ;; esac
key=$(
	{
		cat "$here/build-initramfs.sh" "$here/lib.sh" "$here/init.sh"
		echo "$kver $order $ipbin"
		dpkg-query -W busybox-static can-utils iproute2 libc6 2>/dev/null || true
		for m in $order; do sha256sum "$(modfile "$m")"; done
		for f in $cand $config; do sha256sum "$f"; done
		for e in $extras; do echo "$e"; sha256sum "${e%%=*}"; done
		echo "cand=$cand config=$config"
	} | sha256sum | cut -c1-16
)
img=$cache/initramfs-$key.cpio.gz
if [ ! -s "$img" ]; then
	stage=$(mktemp -d "$cache/stage.XXXXXX")
	trap 'rm -rf "$stage"' EXIT
	cd "$stage"
	mkdir -p bin sbin usr/bin usr/sbin lib lib64 lib/modules proc sys dev tmp etc root run mnt

	# busybox and its applet links
	cp /bin/busybox bin/busybox
	for a in $(bin/busybox --list-full); do
		[ -e "$a" ] || ln -s /bin/busybox "$a"
	done

	# dynamic binaries and the libraries they load (ldd)
	bins=$(dpkg -L can-utils | grep '^/usr/bin/' || true)
	[ -n "$bins" ] || vm_die "can-utils has no binaries in /usr/bin"
	for b in $bins; do cp "$b" usr/bin/; done
	if [ -n "$ipbin" ]; then
		rm -f sbin/ip
		cp "$ipbin" sbin/ip
		bins="$bins $ipbin"
	fi
	for lib in $(ldd $bins 2>/dev/null | sed -n 's/.*=> \(\/[^ ]*\).*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (0x.*/\1/p' | sort -u); do
		mkdir -p ".$(dirname "$lib")"
		cp -L "$lib" ".$lib"
	done

	# kernel modules, decompressed (busybox insmod takes plain .ko), and their order
	: >etc/modules.order
	for m in $order; do
		f=$(modfile "$m")
		case $f in
		*.xz) xz -dc "$f" ;;
		*.zst) zstd -qdc "$f" ;;
		*.gz) gzip -dc "$f" ;;
		*) cat "$f" ;;
		esac >"lib/modules/$m.ko"
		echo "$m.ko" >>etc/modules.order
	done

	cp "$here/init.sh" init
	chmod 755 init
	cat >etc/profile <<'PROFILE'
export PATH=/sbin:/usr/sbin:/bin:/usr/bin
export PS1='cand-vm:\w# '
# Debian's busybox sh runs its own applets before PATH; prefer iproute2's ip.
[ -L /sbin/ip ] || ip() { /sbin/ip "$@"; }
PROFILE
	[ -z "$cand" ] || install -m 755 "$cand" usr/bin/cand
	[ -z "$config" ] || install -m 644 "$config" etc/cand.yaml
	for e in $extras; do
		src=${e%%=*}
		dest=${e#*=}
		[ "$dest" != "$e" ] || dest=/usr/bin/$(basename "$src")
		mkdir -p ".$(dirname "$dest")"
		install -m 755 "$src" ".$dest"
	done

	find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet | gzip -1 >"$img.tmp"
	mv "$img.tmp" "$img"
	cd - >/dev/null
	# Keep the cache small: the newest few images.
	ls -t "$cache"/initramfs-*.cpio.gz | tail -n +6 | xargs -r rm -f
fi
if [ "$img" != "$out" ]; then
	mkdir -p "$(dirname "$out")"
	cp "$img" "$out"
fi
echo "/boot/vmlinuz-$kver"
