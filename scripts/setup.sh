#!/usr/bin/env bash
# Installs the system packages blesniff builds against (Debian/Ubuntu), only those missing.
set -euo pipefail
need=()
for p in libpcap-dev libbluetooth-dev zlib1g-dev libyaml-dev pkg-config "$@"; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
[ ${#need[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null && sudo=sudo
echo "installing: ${need[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
