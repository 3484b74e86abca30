#!/bin/sh
# Renders an HTML report with headless Chromium to a PNG so a person can look at it.
# Usage: scripts/dev/screenshot.sh FILE.html OUT.png [WIDTH] [HEIGHT]
# Console messages (JavaScript errors among them) go to OUT.png.log.
# COLOR_SCHEME=dark renders the page as a browser in dark mode shows it.
set -eu
if [ $# -lt 2 ]; then
    echo "usage: $0 FILE.html OUT.png [WIDTH] [HEIGHT]" >&2
    exit 2
fi
in=$1
out=$2
width=${3:-1400}
height=${4:-3000}
browser=""
for b in chromium chromium-browser google-chrome; do
    if command -v "$b" >/dev/null 2>&1; then browser=$b; break; fi
done
if [ -z "$browser" ]; then
    echo "$0: Chromium not found (Debian: apt-get install chromium)" >&2
    exit 3
fi
case $in in
    /*) abs=$in ;;
    *) abs=$(pwd)/$in ;;
esac
case $out in
    /*) absout=$out ;;
    *) absout=$(pwd)/$out ;;
esac
scheme=""
if [ "${COLOR_SCHEME:-}" = dark ]; then scheme="--force-dark-mode --blink-settings=preferredColorScheme=0"; fi
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
# --no-sandbox: containers and root lack the namespaces Chromium's sandbox needs.
"$browser" --headless --disable-gpu --no-sandbox --hide-scrollbars --user-data-dir="$profile" \
    --enable-logging=stderr --v=0 --window-size="$width,$height" $scheme \
    --screenshot="$absout" "file://$abs" 2>"$absout.log" >/dev/null || true
if [ ! -s "$absout" ]; then
    echo "$0: no screenshot written; see $absout.log" >&2
    exit 1
fi
if grep -E "Uncaught|ERROR:CONSOLE|CONSOLE\(.*\)\] \"(Uncaught|Error)" "$absout.log" >/dev/null 2>&1; then
    echo "$0: the page logged JavaScript errors:" >&2
    grep -E "Uncaught|ERROR:CONSOLE|CONSOLE" "$absout.log" >&2
    exit 4
fi
echo "$absout"
