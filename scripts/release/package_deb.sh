#!/usr/bin/env bash
# Builds a Debian package, blesniff_VERSION_ARCH.deb: the static release binary (stripped), a
# manual page per command, bash, zsh and fish completions, the licence and NOTICE. Its Depends
# are the shared libraries the binary links (dpkg-shlibdeps).
#
#   scripts/release/package_deb.sh [--binary FILE] [--output DIR]     (default output: dist/)
#   DEB_MAINTAINER="Name <address>" sets the Maintainer field.
#
# Prints the package's path. Install with `sudo dpkg -i dist/blesniff_*.deb` (or `apt install ./…`).
set -euo pipefail
cd "$(dirname "$0")/../.."
binary="" out=dist
while [ $# -gt 0 ]; do
  case $1 in
    --binary) binary=$2; shift 2 ;;
    --binary=*) binary=${1#*=}; shift ;;
    --output) out=$2; shift 2 ;;
    --output=*) out=${1#*=}; shift ;;
    -h|--help) sed -n '2,9s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "scripts/release/package_deb.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
command -v dpkg-deb >/dev/null || { echo "scripts/release/package_deb.sh: needs dpkg-deb (Debian or Ubuntu)" >&2; exit 1; }
if [ -z "$binary" ]; then
  scripts/setup.sh dpkg-dev
  binary=$(scripts/release/build.sh)
fi
version=$("$binary" --version | awk '{ print $1 }')
arch=$(dpkg --print-architecture)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$work/root
install -d "$root/DEBIAN" "$root/usr/bin" "$root/usr/share/man/man1" "$root/usr/share/doc/blesniff" \
  "$root/usr/share/bash-completion/completions" "$root/usr/share/zsh/vendor-completions" \
  "$root/usr/share/fish/vendor_completions.d"

install -m 755 "$binary" "$root/usr/bin/blesniff"
strip --strip-unneeded "$root/usr/bin/blesniff"
scripts/release/manuals.sh "$binary" "$work/man" >/dev/null
for m in "$work"/man/*.1; do gzip -9n < "$m" > "$root/usr/share/man/man1/$(basename "$m").gz"; done
"$binary" --generate-completion-script bash > "$root/usr/share/bash-completion/completions/blesniff"
"$binary" --generate-completion-script zsh > "$root/usr/share/zsh/vendor-completions/_blesniff"
"$binary" --generate-completion-script fish > "$root/usr/share/fish/vendor_completions.d/blesniff.fish"

doc=$root/usr/share/doc/blesniff
{
  echo "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/"
  echo "Upstream-Name: blesniff"
  echo
  echo "Files: *"
  echo "Copyright: 2026 The blesniff authors"
  echo "License: Apache-2.0"
  echo
  echo "Files: Sources/Decoders/generated/AssignedNumbers.swift"
  echo "Copyright: 2019 - 2020, Nordic Semiconductor ASA (Bluetooth SIG assigned numbers)"
  echo "License: BSD-3-Clause"
  sed 's/^$/./; s/^/ /' Sources/Decoders/generated/AssignedNumbers.LICENSE
  echo
  echo
  echo "License: Apache-2.0"
  echo " On Debian systems the full text of the Apache License 2.0 is in"
  echo " /usr/share/common-licenses/Apache-2.0, and in /usr/share/doc/blesniff/LICENSE."
} > "$doc/copyright"
install -m 644 LICENSE NOTICE "$doc/"
chmod 644 "$root"/usr/share/*/*/* "$root"/usr/share/*/*/*/* 2>/dev/null || true

# Depends: the packages of the shared libraries the binary links.
if command -v dpkg-shlibdeps >/dev/null; then
  mkdir -p "$work/shlibs/debian"
  printf 'Source: blesniff\n\nPackage: blesniff\nArchitecture: any\n' > "$work/shlibs/debian/control"
  depends=$(cd "$work/shlibs" && dpkg-shlibdeps -O "$root/usr/bin/blesniff" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
else
  depends=$(for lib in $(objdump -p "$binary" | awk '/NEEDED/ { print $2 }'); do
    path=$(ldconfig -p | awk -v l="$lib" '$1 == l { print $NF; exit }')
    [ -n "$path" ] && dpkg -S "$(readlink -f "$path")" 2>/dev/null | cut -d: -f1
  done | sort -u | paste -sd, - | sed 's/,/, /g')
fi
[ -n "$depends" ] || { echo "scripts/release/package_deb.sh: could not tell the binary's library dependencies" >&2; exit 1; }

cat > "$root/DEBIAN/control" <<CONTROL
Package: blesniff
Version: $version
Architecture: $arch
Maintainer: ${DEB_MAINTAINER:-The blesniff authors <noreply@blesniff.invalid>}
Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)
Depends: $depends
Suggests: libcap2-bin
Section: net
Priority: optional
Description: Bluetooth Low Energy traffic analyzer
 blesniff reads HCI captures (pcap, pcapng, btsnoop, Apple PacketLogger, Android bug reports),
 decodes HCI, L2CAP, SMP, ATT/GATT and advertising data, rebuilds each peer's GATT database and
 audits the traffic against best practice, with reports for people and for CI (text, JSON,
 SARIF, JUnit, HTML). It also captures live from the Linux HCI monitor channel.
CONTROL
mkdir -p "$out"
deb=$out/blesniff_${version}_${arch}.deb
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "$deb"
