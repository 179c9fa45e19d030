#!/usr/bin/env bash
# make test-pkg: checks what make release and make deb built in $BUILD.
#   release: the four binaries for their targets, static, -trimpath, no build path
#     inside, the version they print, SHA256SUMS;
#   packages: control fields, every file with its mode and owner, conffiles,
#     maintainer scripts (sh -n), md5sums, the binary byte for byte the release's,
#     the unit the repository's, lintian, the same bytes when built again;
#   the amd64 package installed, reinstalled, removed and purged with dpkg in a
#     scratch root (maintainer scripts run with DPKG_ROOT, the host's /etc, /usr and
#     /var read-only): user, groups, enablement, conffile kept, `cand -check-config`
#     of the installed configuration, `systemd-analyze verify` of the installed unit.
# A part that cannot run here is skipped with the reason; with CI=true it fails.
set -euo pipefail
cd "$(dirname "$0")/.."
export LC_ALL=C
MAKE=${MAKE:-make}
BUILD=${BUILD:-build}
VERSION=${VERSION:-$($MAKE -s --no-print-directory version)}
release=$BUILD/release
debs=$BUILD/deb
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

failures=0
fail() { echo "test-pkg: FAIL: $*" >&2; failures=$((failures + 1)); }
skip() {
  if [ "${CI:-}" = true ]; then
    fail "$* (CI=true: this must run)"
  else
    echo "test-pkg: SKIP: $*"
  fi
}
# expect WHAT GOT WANT
expect() { [ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"; }

# ---- release binaries: name, GOARCH, GOARM, the qemu-user that runs it.
targets=("armv6 arm 6 qemu-arm-static" "armv7 arm 7 qemu-arm-static" "arm64 arm64 - qemu-aarch64-static" "amd64 amd64 - -")
names=()
for t in "${targets[@]}"; do
  read -r name goarch goarm qemu <<<"$t"
  bin=$release/cand-$VERSION-linux-$name
  names+=("${bin##*/}")
  if [ ! -f "$bin" ]; then
    fail "$bin is missing"
    continue
  fi
  info=$(go version -m "$bin")
  for want in "build	GOARCH=$goarch" "build	GOOS=linux" "build	CGO_ENABLED=0" "build	-trimpath=true"; do
    grep -qF "$want" <<<"$info" || fail "$bin: go version -m has no '$want'"
  done
  if [ "$goarm" != - ]; then
    grep -qF "build	GOARM=$goarm" <<<"$info" || fail "$bin: not built with GOARM=$goarm"
  fi
  for path in "$PWD" "$(go env GOMODCACHE)" "$(go env GOROOT)"; do
    if grep -qF "$path" "$bin"; then fail "$bin contains the build path $path"; fi
  done
  run=()
  if [ "$qemu" != - ]; then
    if command -v "$qemu" >/dev/null; then run=("$qemu"); else skip "$bin -version: no $qemu"; continue; fi
  fi
  expect "$bin -version" "$("${run[@]}" "$bin" -version)" "cand $VERSION"
done
if [ -f "$release/SHA256SUMS" ]; then
  expect "SHA256SUMS names" "$(awk '{print $2}' "$release/SHA256SUMS" | sort | tr '\n' ' ')" "$(printf '%s\n' "${names[@]}" | sort | tr '\n' ' ')"
  (cd "$release" && sha256sum --quiet -c SHA256SUMS) || fail "sha256sum -c $release/SHA256SUMS"
else
  fail "$release/SHA256SUMS is missing"
fi

# ---- Debian packages.
# The files every package holds: mode, owner, path (dpkg-deb --contents).
expected_contents() {
  local d
  {
    for d in ./ ./etc/ ./etc/cand/ ./lib/ ./lib/systemd/ ./lib/systemd/system/ ./lib/udev/ ./lib/udev/rules.d/ \
      ./usr/ ./usr/bin/ ./usr/lib/ ./usr/lib/sysusers.d/ ./usr/share/ ./usr/share/doc/ ./usr/share/doc/cand/ \
      ./usr/share/doc/cand/examples/ ./usr/share/lintian/ ./usr/share/lintian/overrides/; do
      echo "drwxr-xr-x root/root $d"
    done
    echo "-rwxr-xr-x root/root ./usr/bin/cand"
    for f in ./etc/cand/cand.yaml ./etc/cand/cand.yaml.example ./lib/systemd/system/cand.service \
      ./lib/udev/rules.d/60-cand.rules ./usr/lib/sysusers.d/cand.conf ./usr/share/lintian/overrides/cand \
      ./usr/share/doc/cand/copyright ./usr/share/doc/cand/changelog.gz ./usr/share/doc/cand/README.md \
      ./usr/share/doc/cand/examples/sim.yaml ./usr/share/doc/cand/examples/cand-rules.yml \
      ./usr/share/doc/cand/examples/cand-dashboard.json; do
      echo "-rw-r--r-- root/root $f"
    done
    for f in docs/*.md; do echo "-rw-r--r-- root/root ./usr/share/doc/cand/${f#docs/}"; done
  } | sort
}

for t in "armhf armv6" "arm64 arm64" "amd64 amd64"; do
  read -r arch name <<<"$t"
  mapfile -t found < <(ls "$debs"/cand_*_"$arch".deb 2>/dev/null)
  if [ ${#found[@]} -ne 1 ]; then
    fail "want one $debs/cand_*_$arch.deb, found ${#found[@]}"
    continue
  fi
  deb=${found[0]}
  debver=$(dpkg-deb --field "$deb" Version)
  expect "$deb file name" "${deb##*/}" "cand_${debver}_$arch.deb"
  expect "$deb Package" "$(dpkg-deb --field "$deb" Package)" cand
  expect "$deb Architecture" "$(dpkg-deb --field "$deb" Architecture)" "$arch"
  expect "$deb Depends" "$(dpkg-deb --field "$deb" Depends)" "systemd | systemd-sysusers, procps"
  dpkg-deb --info "$deb" >/dev/null || fail "dpkg-deb --info $deb"

  got=$(dpkg-deb --contents "$deb" | awk '{print $1, $2, $6}' | sort)
  want=$(expected_contents)
  [ "$got" = "$want" ] || fail "$deb contents differ (- want, + got):
$(diff <(echo "$want") <(echo "$got") | grep '^[<>]' | sed 's/^</-/; s/^>/+/')"

  x=$scratch/$arch
  mkdir -p "$x/root" "$x/control"
  dpkg-deb -x "$deb" "$x/root"
  dpkg-deb -e "$deb" "$x/control"
  expect "$deb conffiles" "$(cat "$x/control/conffiles")" "$(printf '/etc/cand/cand.yaml\n/etc/cand/cand.yaml.example')"
  for s in postinst prerm postrm; do
    expect "$deb $s mode" "$(stat -c %a "$x/control/$s")" 755
    sh -n "$x/control/$s" || fail "$deb $s: sh -n"
  done
  (cd "$x/root" && md5sum --quiet -c ../control/md5sums) || fail "$deb: md5sums"
  expect "$deb md5sums files" "$(awk '{print $2}' "$x/control/md5sums" | sort | tr '\n' ' ')" \
    "$(cd "$x/root" && find . -type f ! -path './etc/*' -printf '%P\n' | sort | tr '\n' ' ')"
  want_sum=$(awk -v f="cand-$VERSION-linux-$name" '$2 == f {print $1}' "$release/SHA256SUMS" 2>/dev/null || true)
  expect "$deb /usr/bin/cand sha256 (the release's cand-$VERSION-linux-$name)" "$(sha256sum <"$x/root/usr/bin/cand" | cut -d' ' -f1)" "$want_sum"
  cmp -s "$x/root/lib/systemd/system/cand.service" deploy/systemd/cand.service || fail "$deb: the unit is not deploy/systemd/cand.service"
  cmp -s "$x/root/etc/cand/cand.yaml" deploy/cand.yaml || fail "$deb: /etc/cand/cand.yaml is not deploy/cand.yaml"
  gzip -t "$x/root/usr/share/doc/cand/changelog.gz" || fail "$deb: changelog.gz"
  grep -q "^cand ($debver) " <(zcat "$x/root/usr/share/doc/cand/changelog.gz") || fail "$deb: changelog.gz does not start with cand ($debver)"

  if command -v lintian >/dev/null; then
    # Left on purpose: no-manual-page (cand -h and docs/deployment.md document the flags).
    tags=$(lintian --pedantic "$deb" 2>/dev/null | grep -E '^[EW]: ' | grep -vF 'W: cand: no-manual-page [usr/bin/cand]' || true)
    [ -z "$tags" ] || fail "lintian $deb:
$tags"
  else
    skip "lintian $deb: lintian is not installed (tools/install-deps.sh installs it)"
  fi
done

# The same inputs give the same package.
amd64=$(ls "$debs"/cand_*_amd64.deb 2>/dev/null | head -n 1)
if [ -n "$amd64" ]; then
  mkdir -p "$scratch/again"
  ln -s "$(realpath "$release")" "$scratch/again/release"
  again=$(VERSION=$VERSION BUILD=$scratch/again tools/build-deb.sh amd64)
  cmp -s "$amd64" "$again" || fail "tools/build-deb.sh amd64 built different bytes the second time"
fi

# ---- The amd64 package installed into a scratch root.
install_test() {
  local R=$scratch/dpkgroot deb=$1
  mkdir -p "$R/var/lib/dpkg/info" "$R/var/lib/dpkg/updates" "$R/var/lib/dpkg/triggers" "$R/etc"
  : >"$R/var/lib/dpkg/status"
  : >"$R/var/lib/dpkg/available"
  # A plain Debian: the base users and groups (kmem among them, no gpio).
  cp /usr/share/base-passwd/passwd.master "$R/etc/passwd"
  cp /usr/share/base-passwd/group.master "$R/etc/group"
  cp /etc/login.defs "$R/etc/login.defs"
  # dpkg's and the scripts' output goes to a log, shown when a step fails.
  dpkg_r() {
    dpkg --root="$R" --log=/dev/null --force-script-chrootless --force-depends "$@" >"$scratch/dpkg.log" 2>&1 ||
      { cat "$scratch/dpkg.log" >&2; return 1; }
  }

  dpkg_r -i "$deb" || { fail "dpkg -i $deb into $R"; return; }
  expect "installed status" "$(dpkg-query --admindir="$R/var/lib/dpkg" -W -f='${Status}' cand)" "install ok installed"
  for f in usr/bin/cand lib/systemd/system/cand.service usr/lib/sysusers.d/cand.conf lib/udev/rules.d/60-cand.rules etc/cand/cand.yaml; do
    [ -f "$R/$f" ] || fail "installed: /$f is missing"
  done
  grep -qx 'cand:x:[0-9]*:[0-9]*:cand CAN daemon:/nonexistent:/usr/sbin/nologin' "$R/etc/passwd" || fail "installed: no system user cand in /etc/passwd"
  local uid gid
  uid=$(awk -F: '$1 == "cand" {print $3}' "$R/etc/passwd")
  gid=$(awk -F: '$1 == "cand" {print $3}' "$R/etc/group")
  [ -n "$uid" ] && [ "$uid" -lt 1000 ] || fail "installed: uid of cand '$uid' is not a system uid"
  expect "installed: group cand is the user's" "$gid" "$(awk -F: '$1 == "cand" {print $4}' "$R/etc/passwd")"
  # Every group the unit runs with exists.
  for g in $(sed -n 's/^SupplementaryGroups=//p' "$R/lib/systemd/system/cand.service"); do
    grep -q "^$g:" "$R/etc/group" || fail "installed: the unit's supplementary group $g does not exist"
  done
  expect "installed: enabled" "$(readlink "$R/etc/systemd/system/multi-user.target.wants/cand.service")" /lib/systemd/system/cand.service
  expect "installed: cand -check-config" "$("$R/usr/bin/cand" -check-config -config "$R/etc/cand/cand.yaml" | tail -n 1)" "$R/etc/cand/cand.yaml: ok"

  if command -v systemd-analyze >/dev/null; then
    # verify resolves the unit's dependencies and ExecStart= under --root: the
    # installed unit and binary, with the host's own units beside them, and the
    # host's kill for ExecReload=.
    local V=$scratch/verifyroot out
    mkdir -p "$V/lib/systemd/system" "$V/usr/bin" "$V/bin"
    cp -a /lib/systemd/system/. "$V/lib/systemd/system/"
    cp "$R/lib/systemd/system/cand.service" "$V/lib/systemd/system/cand.service"
    cp -a "$R/usr/bin/cand" "$V/usr/bin/cand"
    cp "$(readlink -f /bin/kill)" "$V/bin/kill"
    out=$(systemd-analyze verify --man=no --root="$V" /lib/systemd/system/cand.service 2>&1) || fail "systemd-analyze verify of the installed unit: $out"
    [ -z "$out" ] || fail "systemd-analyze verify of the installed unit: $out"
  else
    skip "systemd-analyze verify of the installed unit: no systemd-analyze (apt-get install systemd)"
  fi

  # Reinstalling (the upgrade path) keeps an edited conffile.
  echo "# edited" >>"$R/etc/cand/cand.yaml"
  dpkg_r -i "$deb" || fail "dpkg -i $deb again"
  [ "$(tail -n 1 "$R/etc/cand/cand.yaml")" = "# edited" ] || fail "reinstall: the edited /etc/cand/cand.yaml was replaced"

  dpkg_r -r cand || fail "dpkg -r cand"
  [ ! -e "$R/usr/bin/cand" ] || fail "removed: /usr/bin/cand is still there"
  [ -f "$R/etc/cand/cand.yaml" ] || fail "removed: the conffile /etc/cand/cand.yaml went with the package"
  grep -q '^cand:' "$R/etc/passwd" || fail "removed: the user cand went before the purge"

  dpkg_r -P cand || fail "dpkg -P cand"
  [ ! -e "$R/etc/cand" ] || fail "purged: /etc/cand is still there"
  ! grep -q '^cand:' "$R/etc/passwd" || fail "purged: the user cand is still there"
  ! grep -q '^cand:' "$R/etc/group" || fail "purged: the group cand is still there"
  [ ! -e "$R/etc/systemd/system/multi-user.target.wants/cand.service" ] || fail "purged: the enablement symlink is still there"
  expect "purged status" "$(dpkg-query --admindir="$R/var/lib/dpkg" -W -f='${db:Status-Status}' cand 2>/dev/null || echo gone)" gone
}

if [ -z "$amd64" ]; then
  :
elif [ "$(id -u)" -ne 0 ]; then
  skip "installing $amd64 into a scratch root: needs root (dpkg --root, a private mount namespace)"
elif ! unshare -m true 2>/dev/null; then
  skip "installing $amd64 into a scratch root: unshare -m is not permitted here"
else
  case $scratch in /etc/* | /usr/* | /var/*) fail "TMPDIR $scratch lies under a directory the test makes read-only" ;; esac
  # The maintainer scripts run on this host with DPKG_ROOT set: the host's own
  # /etc, /usr and /var are read-only meanwhile, so a script that ignored
  # DPKG_ROOT fails instead of changing this machine.
  export -f install_test fail skip expect
  export scratch failures
  unshare -m bash -c '
    set -euo pipefail
    for d in /etc /usr /var; do mount --bind -o ro "$d" "$d"; done
    install_test "$1"
    exit "$failures"' _ "$amd64" || failures=$((failures + $?))
fi

if [ "$failures" -ne 0 ]; then
  echo "test-pkg: $failures failure(s)" >&2
  exit 1
fi
echo "test-pkg: ok (release $VERSION, $(ls "$debs"/*.deb | xargs -n1 basename | tr '\n' ' '))"
