#!/bin/sh
# run-test.sh — cand under a real systemd as PID 1 (make test-systemd).
#
# Builds cand, installs it with `make install DESTDIR=<overlay> PREFIX=/usr`, builds
# two amd64 Debian packages with `make deb` (versions $SD_DEB1 and $SD_DEB2, the
# second higher), lays them with the test driver (vmtest.sh, cand-vmtest.service)
# and its configuration (cand-sd.yaml) in a small cpio overlay, and boots the host's
# kernel with the Debian 12 root (build-rootfs.sh, cached) and that overlay as its
# initramfs: systemd runs from it as PID 1 (rdinit=/sbin/init). The console's
# VMTEST lines become the result: exit 0 only if every expected check printed PASS
# (or SKIP with its reason), none FAIL, and VMTEST DONE came before the timeout.
# The last line is "vm: N passed, M failed, K skipped".
#
# Environment:
#   BUILD       build directory [<repo>/build]; the VM's files go to $BUILD/vm/systemd
#   SD_PARTS    the driver's parts, in order [install,slcan,deb]; slcan: systemd-networkd's
#               [CAN] BitRate= on a slcan interface
#   SD_DEB1 SD_DEB2  the two package versions [0.0~vm1 0.0~vm2]
#   VM_TIMEOUT  hard limit for the VM in seconds [600]
#   VM_SMP      guest CPUs [2]
#   VM_ACCEL    qemu accelerator [tcg]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
BUILD=${BUILD:-$repo/build}
export BUILD
out=$BUILD/vm/systemd
mkdir -p "$out"
parts=${SD_PARTS:-install,slcan,deb}
v1=${SD_DEB1:-0.0~vm1} v2=${SD_DEB2:-0.0~vm2}
timeout=${VM_TIMEOUT:-600}
start=$(date +%s)
has_part() { case ,$parts, in *,$1,*) return 0 ;; esac; return 1; }

vm_ensure_packages
sd_ensure_packages
command -v go >/dev/null || vm_die "go not found in PATH"
kernel=$(sh "$here/build-rootfs.sh" "$out/rootfs.cpio")
t_root=$(date +%s)

# The overlay: what make install puts into a root, the packages, the driver.
stage=$out/overlay
rm -rf "$stage"
mkdir -p "$stage"
make -C "$repo" --no-print-directory -s build BUILD="$BUILD" >&2
make -C "$repo" --no-print-directory install DESTDIR="$stage" PREFIX=/usr BUILD="$BUILD" >"$out/install.log" 2>&1 ||
	{ cat "$out/install.log" >&2; vm_die "make install DESTDIR=$stage PREFIX=/usr failed"; }
lib=$stage/usr/lib/cand-vmtest
mkdir -p "$lib"
(cd "$stage" && find . -type f | sed 's|^\.||') >"$lib/install.list"
if has_part deb; then
	# tools/build-deb.sh, as make deb runs it, for amd64 alone: the binary it packs
	# is make build's with the same flags (make release builds all four).
	for v in "$v1" "$v2"; do
		d=$out/deb-$v
		rm -rf "$d"
		{ make -C "$repo" --no-print-directory build VERSION="$v" BUILD="$d" &&
			mkdir -p "$d/release" && mv "$d/cand" "$d/release/cand-$v-linux-amd64" &&
			(cd "$repo" && VERSION="$v" BUILD="$d" tools/build-deb.sh amd64); } >"$out/deb-$v.log" 2>&1 ||
			{ tail -n 20 "$out/deb-$v.log" >&2; vm_die "building the amd64 package $v failed (log: $out/deb-$v.log)"; }
		deb=$(ls "$d"/deb/cand_*_amd64.deb)
		dv=$(dpkg-deb -f "$deb" Version)
		cp "$deb" "$lib/cand_${dv}_amd64.deb"
		echo "$dv" >>"$lib/versions"
	done
	sed -n 1p "$lib/versions" >"$lib/deb1.version"
	sed -n 2p "$lib/versions" >"$lib/deb2.version"
	dpkg --compare-versions "$(cat "$lib/deb2.version")" gt "$(cat "$lib/deb1.version")" ||
		vm_die "SD_DEB2 ($v2) must be a higher Debian version than SD_DEB1 ($v1)"
fi
install -m 755 "$here/vmtest.sh" "$lib/vmtest.sh"
install -m 644 "$here/cand-sd.yaml" "$lib/cand-sd.yaml"
install -D -m 644 "$here/cand-vmtest.service" "$stage/etc/systemd/system/cand-vmtest.service"
mkdir -p "$stage/etc/systemd/system/multi-user.target.wants"
ln -s ../cand-vmtest.service "$stage/etc/systemd/system/multi-user.target.wants/cand-vmtest.service"
# The kernel unpacks concatenated cpio archives one after the other, and an entry
# of another type replaces what is there: the overlay's lib/ would replace the
# root's /lib -> usr/lib symlink (Debian 12 is merged-/usr), so it goes there.
for d in bin sbin lib; do
	[ -d "$stage/$d" ] || continue
	mkdir -p "$stage/usr/$d"
	cp -a "$stage/$d/." "$stage/usr/$d/"
	rm -rf "${stage:?}/$d"
done
(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) >"$out/overlay.cpio"
cat "$out/rootfs.cpio" "$out/overlay.cpio" >"$out/initrd.cpio"
t_built=$(date +%s)

log=$out/test.log
echo "vm: booting $kernel with systemd as PID 1, cand.parts=$parts (log: $log)"
t0=$(date +%s)
vm_boot "$log" "$timeout" 1536 "$kernel" "$out/initrd.cpio" "console=ttyS0 rdinit=/sbin/init panic=-1 quiet cand.parts=$parts"
t1=$(date +%s)
rm -f "$out/initrd.cpio"

# The checks each part must report (the names vmtest.sh prints).
expected=""
if has_part install; then
	for c in analyze-verify analyze-security user start ready-means-up status-text status-rates \
		chip-absent-active chip-absent-metrics chip-absent-status rx tx-answer stop-clean stopped-link-down \
		stopped-enetdown candump-after-start restart-new-pid candump-after-restart link-down-active link-down-metric \
		link-down-status link-down-enetdown link-up-metric link-up-frames reload reload-applied \
		reload-needs-restart reload-active journal-fields watchdog-stall-logged watchdog-restart \
		watchdog-journal watchdog-active-again vxcan-netns-start vxcan-netns-rx vxcan-netns-answer \
		final-stop-clean final-stop-link-down; do
		expected="$expected install/$c"
	done
	expected="$expected install-again/start install-again/ready-means-up"
fi
if has_part deb; then
	for c in install user enabled conffile started configured-active configured-up rx upgrade \
		upgrade-conffile-kept upgrade-active upgrade-version upgrade-candump remove remove-stopped \
		remove-binary-gone remove-conffile-kept remove-user-kept remove-link-stays purge purge-etc-gone \
		purge-user-gone purge-disabled; do
		expected="$expected deb/$c"
	done
fi
if has_part slcan; then
	for c in networkd start kernel-netdev networkd-bitrate status-bitrate netdev-gone; do
		expected="$expected slcan/$c"
	done
fi
boot=$(sed -n 's/.*multi-user.target reached at \([0-9.]*\) s.*/\1/p' "$log" | head -n 1)
vm_verdict "$log" "$log" "$expected" "$timeout" \
	"vm: root file system $((t_root - start)) s, overlay and packages $((t_built - t_root)) s, VM $((t1 - t0)) s (multi-user.target at ${boot:-?} s guest uptime), total $(($(date +%s) - start)) s"
