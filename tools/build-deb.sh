#!/usr/bin/env bash
# Builds $BUILD/deb/cand_VERSION_ARCH.deb with dpkg-deb, no debhelper:
#   tools/build-deb.sh armhf|arm64|amd64        (make deb builds all three)
# The files are staged by `make install PREFIX=/usr` with the release binary for ARCH
# ($BUILD/release, built by make release if missing); armhf holds the armv6 build,
# which runs on every Pi from the Zero and 1 up. The control files, conffiles and
# maintainer scripts are deploy/debian/'s; /usr/share/doc/cand/copyright gets the
# license texts of the Go modules linked into the binary appended.
# Environment: VERSION (default: make version), BUILD (default build),
# DEB_MAINTAINER (default: the author of the last commit).
set -euo pipefail
arch=${1:-}
case $arch in
  armhf) bin=armv6 ;;
  arm64) bin=arm64 ;;
  amd64) bin=amd64 ;;
  *) echo "usage: tools/build-deb.sh armhf|arm64|amd64" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
umask 022
export LC_ALL=C
MAKE=${MAKE:-make}
BUILD=${BUILD:-build}
VERSION=${VERSION:-$($MAKE -s --no-print-directory version)}
binary=$BUILD/release/cand-$VERSION-linux-$bin
if [ ! -x "$binary" ]; then
  $MAKE --no-print-directory release VERSION="$VERSION" BUILD="$BUILD" >&2
fi

# Reproducible: every timestamp is the commit's (reproducible-builds.org SOURCE_DATE_EPOCH).
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}

# A Debian version from git describe: a tag v1.2.0-3-gabc1234-dirty becomes
# 1.2.0+3+gabc1234+dirty (no '-', which would start a Debian revision); an
# untagged commit abc1234 becomes 0.0~gitYYYYMMDD.abc1234, sorting before any tag.
if [[ $VERSION =~ ^v?[0-9]+\.[0-9] ]]; then
  debver=${VERSION#v}
  debver=${debver//-/+}
else
  debver=0.0~git$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y%m%d).${VERSION//-/+}
fi
# The Maintainer field: DEB_MAINTAINER, else the author of the commit built.
maintainer=${DEB_MAINTAINER:-$(git log -1 --format='%an <%ae>' 2>/dev/null || true)}
if [ -z "$maintainer" ]; then
  echo "build-deb: set DEB_MAINTAINER='Name <address>' (no git history to take it from)" >&2
  exit 2
fi

out=$BUILD/deb
stage=$out/cand_${debver}_$arch
rm -rf "$stage" "$stage.deb"
mkdir -p "$stage/DEBIAN"
$MAKE --no-print-directory -s install DESTDIR="$(realpath "$stage")" PREFIX=/usr CAND_BIN="$binary" >/dev/null

doc=$stage/usr/share/doc/cand
# license_text FILE: the file, or for the Apache License 2.0 a pointer to Debian's
# copy of it (Debian policy 12.5).
license_text() {
  if grep -q 'Version 2.0, January 2004' "$1" && grep -q 'TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION' "$1"; then
    echo "Apache License, Version 2.0: /usr/share/common-licenses/Apache-2.0"
  else
    cat "$1"
  fi
}
{
  cat deploy/debian/copyright
  printf '\n/usr/bin/cand links the Go standard library and the Go modules below; the\n'
  printf 'license and notice files of each follow its name.\n'
  gomodcache=$(go env GOMODCACHE)
  printf '\n==== Go standard library %s\n\n' "$(go env GOVERSION)"
  cat "$(go env GOROOT)/LICENSE"
  # go version -m lists the modules built into the binary: "dep PATH VERSION SUM".
  go version -m "$binary" | awk '$1 == "dep" { print $2, $3 }' | while read -r mod ver; do
    # The module cache spells capitals as '!' and the lower-case letter.
    dir=$gomodcache/$(sed 's/[A-Z]/!\L&/g' <<<"$mod")@$ver
    mapfile -t files < <(find "$dir" -maxdepth 1 -type f \( -iname 'LICENSE*' -o -iname 'COPYING*' -o -iname 'NOTICE*' \) | sort)
    if ! printf '%s\n' "${files[@]}" | grep -qiE '/(LICENSE|COPYING)[^/]*$'; then
      echo "build-deb: no license file for $mod $ver in $dir (go mod download $mod@$ver)" >&2
      exit 1
    fi
    printf '\n==== %s %s\n' "$mod" "$ver"
    for f in "${files[@]}"; do
      printf '\n---- %s\n\n' "${f##*/}"
      license_text "$f"
    done
  done
} > "$doc/copyright"
printf 'cand (%s) unstable; urgency=medium\n\n  * Built from %s (git describe).\n\n -- %s  %s\n' \
  "$debver" "$VERSION" "$maintainer" "$(date -u -R -d "@$SOURCE_DATE_EPOCH")" | gzip -9n > "$doc/changelog.gz"

install -m 0644 deploy/debian/conffiles "$stage/DEBIAN/conffiles"
install -D -m 0644 deploy/debian/lintian-overrides "$stage/usr/share/lintian/overrides/cand"
install -m 0755 deploy/debian/postinst deploy/debian/prerm deploy/debian/postrm "$stage/DEBIAN/"
(cd "$stage" && find . -type f ! -path './DEBIAN/*' ! -path './etc/*' -printf '%P\n' | sort | xargs -d '\n' md5sum) > "$stage/DEBIAN/md5sums"
chmod 0644 "$stage/DEBIAN/md5sums"
size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
sed -e "s|@VERSION@|$debver|" -e "s|@ARCH@|$arch|" -e "s|@SIZE@|$size|" -e "s|@MAINTAINER@|$maintainer|" \
  deploy/debian/control > "$stage/DEBIAN/control"
chmod 0644 "$stage/DEBIAN/control"

find "$stage" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
dpkg-deb --root-owner-group -Zxz --build "$stage" "$stage.deb" >/dev/null
rm -rf "$stage"
echo "$stage.deb"
