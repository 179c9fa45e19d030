#!/usr/bin/env bash
# Installs the Debian packages cand's tests and tools use, if they are missing.
# A fresh Debian 12 machine (as root) has none of them; CI calls this first.
#   qemu-system-x86, linux-image-amd64, busybox-static, can-utils, cpio: the VM tier
#     (real SocketCAN: the build machines' own kernel has no CAN support)
#   qemu-user-static: 32-bit ARM and arm64 unit tests
#   linux-libc-dev: /usr/include/linux/gpio.h, checked against hw/gpio's layouts
#   prometheus: promtool check metrics, and a real server scraping cand in a test
#   stress-ng: the benchmark's loaded-machine scenario
#   python3-can: python-can 4.1, whose socketcand interface drives cand's socketcand
#     server in a test (socketcand/pycan_test.go)
set -euo pipefail
want=(qemu-system-x86 linux-image-amd64 busybox-static can-utils cpio qemu-user-static linux-libc-dev prometheus stress-ng python3-can)
missing=()
# systemd: systemd-analyze verify/security and systemd-sysusers check the unit
#   (deploy/systemd), also where systemd is not the running init
# lintian: checks the Debian packages (make test-pkg)
want+=(systemd lintian)
# mmdebstrap: the Debian 12 root file system of the systemd VM tier (make
#   test-systemd), built from the host's apt sources
want+=(mmdebstrap)
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing Debian packages: ${missing[*]}; run as root: apt-get install ${missing[*]}" >&2
  exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
