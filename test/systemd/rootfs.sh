#!/usr/bin/env bash
# Prints the path of a cached Debian bookworm rootfs tarball with systemd (for the nspawn tests),
# building it with debootstrap on first use (~1 min) — docs/reference/systemd-testing.md §3.
# Cache key = the debootstrap arguments, so changing them builds a new tarball.
set -euo pipefail
SUITE=bookworm
INCLUDE=systemd,systemd-sysv,dbus,iproute2,iptables,procps,nftables,conntrack
MIRROR=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
MIRROR=${MIRROR:-http://deb.debian.org/debian}
KEY=$(printf '%s %s %s' "$SUITE" "$INCLUDE" minbase | sha256sum | cut -c1-12)
CACHE=${NODELET_ROOTFS_CACHE:-/var/cache/nodelet}
OUT=$CACHE/$SUITE-sd-$KEY.tar.zst
if [ -s "$OUT" ]; then echo "$OUT"; exit 0; fi
mkdir -p "$CACHE"
work=$(mktemp -d "$CACHE/rootfs.XXXXXX")
trap 'rm -rf "$work"' EXIT
debootstrap --variant=minbase --include="$INCLUDE" "$SUITE" "$work/root" "$MIRROR" >"$work/debootstrap.log" 2>&1 || {
  tail -20 "$work/debootstrap.log" >&2; exit 1; }
rm -rf "$work"/root/var/cache/apt/archives/*.deb "$work"/root/var/lib/apt/lists/* "$work"/root/usr/share/{doc,man,info}
tar -C "$work/root" -cf - . | zstd -q -T0 -10 -o "$work/rootfs.tar.zst"
mv "$work/rootfs.tar.zst" "$OUT"
echo "$OUT"
