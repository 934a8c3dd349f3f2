#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs in the guest for the KUnit stage.  Built-in suites already ran at
# boot; this prepares an ext4 file system on a loop device and a tmpfs
# mounted huge=always, then loads the build ID test module on them.  The
# host reads the KTAP results from the kernel log.
set -e
. "$(dirname "$0")/ext4-scratch.sh"
scratch_mount 64
huge=$(mktemp -d)
mount -t tmpfs -o huge=always,size=64M tmpfs "$huge"
# The loader holds a memfd_secret() file and passes it as secret_fd=N.
"$BUILDID_GUEST_BIN/load_with_secretmem" "$(modinfo -n buildid_kunit)" \
	dir="$scratch" huge_dir="$huge"
modprobe -r buildid_kunit
umount "$huge"
scratch_umount
echo "KUnit module run finished"
