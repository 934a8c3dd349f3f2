#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs in the guest for the KUnit stage.  Built-in suites already ran at
# boot; this prepares an ext4 file system on a loop device and a tmpfs
# mounted huge=always, then loads the build ID test module on them.  The
# host reads the KTAP results from the kernel log.
set -e
work=$(mktemp -d)
# /tmp is an overlay on the host's /tmp, which cannot back a loop device.
mount -t tmpfs -o size=256M tmpfs "$work"
truncate -s 64M "$work/ext4.img"
mkfs.ext4 -q -F "$work/ext4.img"
mkdir "$work/ext4" "$work/huge"
loopdev=$(losetup -f --show "$work/ext4.img")
mount -t ext4 "$loopdev" "$work/ext4"
mount -t tmpfs -o huge=always,size=64M tmpfs "$work/huge"
# The loader holds a memfd_secret() file and passes it as secret_fd=N.
"$BUILDID_GUEST_BIN/load_with_secretmem" "$(modinfo -n buildid_kunit)" \
	dir="$work/ext4" huge_dir="$work/huge"
modprobe -r buildid_kunit
umount "$work/huge" "$work/ext4"
losetup -d "$loopdev"
umount "$work"
echo "KUnit module run finished"
