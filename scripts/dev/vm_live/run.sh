#!/usr/bin/env bash
# A real Linux Bluetooth stack in a throw-away VM, to test live capture against the kernel's HCI
# monitor channel. Verified recipe (Debian bookworm, 2 cores, no KVM needed: TCG boots in ~15 s).
# Usage: run.sh BLESNIFF_BINARY [GUEST_SCRIPT]   (root; writes under $WORK, default /tmp/vm-live)
# The guest sees the host's / read-only and $WORK read-write, through 9p, and runs GUEST_SCRIPT
# (default: guest.sh beside this file) with WORK and BLESNIFF set. Output files land in $WORK.
# Exit: 0 the guest script passed; 77 no VM here (not root, QEMU or the kernel cannot be
# installed, the guest never came up); anything else the guest script failed.
set -euo pipefail
skip() { echo "SKIP: $*" >&2; exit 77; }
[ "$(id -u)" = 0 ] || skip "booting the VM needs root (apt-get, 9p export of /)"
HERE=$(cd "$(dirname "$0")" && pwd)
BIN=$(realpath "$1"); GUEST=$(realpath "${2:-$HERE/guest.sh}")
WORK=${WORK:-/tmp/vm-live}; mkdir -p "$WORK"; cd "$WORK"
need=(); for p in qemu-system-x86 busybox-static cpio bluez; do dpkg -s $p >/dev/null 2>&1 || need+=($p); done
if [ ${#need[@]} -gt 0 ]; then
  command -v apt-get >/dev/null || skip "no apt-get to install ${need[*]}"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null; } || skip "cannot install ${need[*]}"
fi
command -v qemu-system-x86_64 >/dev/null || skip "no qemu-system-x86_64"
if [ ! -d kernel ]; then
  KPKG=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-/{print $2; exit}')
  [ -n "$KPKG" ] || skip "no linux-image-amd64 package known to apt"
  apt-get download "$KPKG" >/dev/null 2>&1 && dpkg-deb -x "$KPKG"_*.deb kernel || { rm -rf kernel; skip "cannot download the kernel $KPKG"; }
fi
VMLINUZ=$(ls kernel/boot/vmlinuz-*); KMOD=$(ls -d kernel/lib/modules/*)/kernel
# Modules in load order: virtio + 9p for the shared folders, then Bluetooth and the virtual HCI driver.
# SMP needs ECDH (whose self-test needs the default RNG: drbg, with sha512 and ctr) and AES-CMAC; without
# them the kernel logs "Unable to create ECDH crypto context" and never pairs.
MODS="drivers/virtio/virtio_ring drivers/virtio/virtio_pci_modern_dev drivers/virtio/virtio_pci_legacy_dev
drivers/virtio/virtio drivers/virtio/virtio_pci net/9p/9pnet net/9p/9pnet_virtio fs/netfs/netfs
fs/fscache/fscache fs/9p/9p crypto/sha512_generic crypto/ctr crypto/jitterentropy_rng crypto/drbg crypto/ecc
crypto/ecdh_generic crypto/cmac net/rfkill/rfkill lib/crc16
net/bluetooth/bluetooth drivers/bluetooth/hci_vhci"
rm -rf initramfs; mkdir -p initramfs/{bin,mods,proc,sys,dev,host}
# A module missing from the package is built in (or gone): the guest's check says if it mattered.
cp /bin/busybox initramfs/bin/; for m in $MODS; do [ ! -f "$KMOD/$m.ko" ] || cp "$KMOD/$m.ko" initramfs/mods/; done
cp "$GUEST" "$WORK/guest-script.sh"; cp "$BIN" "$WORK/blesniff"
cat > initramfs/init <<INIT
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
for m in $(for m in $MODS; do printf '%s ' "$(basename $m)"; done); do [ ! -f /mods/\$m.ko ] || insmod /mods/\$m.ko || echo "insmod \$m failed"; done
mount -t 9p -o trans=virtio,version=9p2000.L,ro hostroot /host
mount -t 9p -o trans=virtio,version=9p2000.L,rw work /host$WORK
mount -t proc proc /host/proc; mount -t sysfs sys /host/sys; mount -t devtmpfs dev /host/dev; mount -t tmpfs run /host/run
echo "GUEST UP \$(uname -r)"
chroot /host /usr/bin/env WORK=$WORK BLESNIFF=$WORK/blesniff VMLIVE=$HERE BUMBLE_PYTHON=${BUMBLE_PYTHON:-python3} /bin/bash $WORK/guest-script.sh
echo "GUEST DONE rc=\$?"
poweroff -f
INIT
chmod +x initramfs/init; (cd initramfs && find . | cpio -o -H newc 2>/dev/null | gzip -1 > ../initrd.gz)
ACCEL=tcg; [ -w /dev/kvm ] && [ -n "${VM_KVM:-}" ] && ACCEL=kvm   # KVM here failed on an MSR; TCG is reliable
timeout "${VM_TIMEOUT:-600}" qemu-system-x86_64 -accel $ACCEL -cpu max -m 1536 -smp 1 -nographic -no-reboot \
  -kernel "$VMLINUZ" -initrd initrd.gz -append "console=ttyS0 panic=-1 loglevel=3" \
  -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
  -virtfs local,path="$WORK",mount_tag=work,security_model=none,multidevs=remap 2>&1 | tr -d '\r' | tee "$WORK/console.log" | grep -E "^(GUEST|==|FAIL|ok )" || true
grep -q "GUEST UP" "$WORK/console.log" || skip "the VM did not boot (see $WORK/console.log)"
grep -q "GUEST DONE rc=0" "$WORK/console.log"
