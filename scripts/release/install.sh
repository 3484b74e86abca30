#!/usr/bin/env bash
# Installs blesniff: the binary, a manual page per command, and bash, zsh and fish completions.
#
#   scripts/release/install.sh [--prefix DIR] [--binary FILE] [--capture]
#   scripts/release/install.sh [--prefix DIR] --uninstall
#
#   --prefix DIR    where to install (default /usr/local): DIR/bin, DIR/share/man/man1,
#                   DIR/share/bash-completion/completions, DIR/share/zsh/site-functions,
#                   DIR/share/fish/vendor_completions.d
#   --binary FILE   install this binary instead of building one (scripts/release/build.sh)
#   --capture       give the binary the capability live capture needs (cap_net_raw, with setcap),
#                   so `blesniff capture` works without root; without it, run capture as root
#   --uninstall     remove what an install put under the prefix
set -euo pipefail
cd "$(dirname "$0")/../.."
prefix=/usr/local binary="" capture=false uninstall=false
while [ $# -gt 0 ]; do
  case $1 in
    --prefix) prefix=$2; shift 2 ;;
    --prefix=*) prefix=${1#*=}; shift ;;
    --binary) binary=$2; shift 2 ;;
    --binary=*) binary=${1#*=}; shift ;;
    --capture) capture=true; shift ;;
    --uninstall) uninstall=true; shift ;;
    -h|--help) sed -n '2,14s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "install.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
bindir=$prefix/bin
mandir=$prefix/share/man/man1
bashdir=$prefix/share/bash-completion/completions
zshdir=$prefix/share/zsh/site-functions
fishdir=$prefix/share/fish/vendor_completions.d

if $uninstall; then
  rm -f "$bindir/blesniff" "$mandir"/blesniff.1 "$mandir"/blesniff.*.1 "$mandir"/blesniff.1.gz "$mandir"/blesniff.*.1.gz \
        "$bashdir/blesniff" "$zshdir/_blesniff" "$fishdir/blesniff.fish"
  echo "removed blesniff from $prefix"
  exit 0
fi

if [ -z "$binary" ]; then
  scripts/setup.sh
  binary=$(scripts/release/build.sh)
fi
[ -x "$binary" ] || { echo "install.sh: $binary is not an executable" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
scripts/release/manuals.sh "$binary" "$work/man" >/dev/null

install -d "$bindir" "$mandir" "$bashdir" "$zshdir" "$fishdir"
install -m 755 "$binary" "$bindir/blesniff"
strip "$bindir/blesniff" 2>/dev/null || true
install -m 644 "$work"/man/*.1 "$mandir/"
"$bindir/blesniff" --generate-completion-script bash > "$bashdir/blesniff"
"$bindir/blesniff" --generate-completion-script zsh > "$zshdir/_blesniff"
"$bindir/blesniff" --generate-completion-script fish > "$fishdir/blesniff.fish"
chmod 644 "$bashdir/blesniff" "$zshdir/_blesniff" "$fishdir/blesniff.fish"

if $capture; then
  command -v setcap >/dev/null || { echo "install.sh: --capture needs setcap (Debian: apt-get install libcap2-bin)" >&2; exit 1; }
  setcap cap_net_raw+ep "$bindir/blesniff"
  echo "live capture: $bindir/blesniff has cap_net_raw (blesniff capture works without root)"
fi
echo "installed $("$bindir/blesniff" --version | sed 's/^/blesniff /') in $prefix"
