#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs in the guest for the buildid kselftests: gives them an ext4 scratch
# directory (its page cache can be evicted, unlike tmpfs, and it is not the
# 9p root), then runs the suite the documented way.  The binaries were
# built on the host into the same O= directory, so make only checks them.
#   $1: kernel source tree   $2: kernel build (O=) directory
set -e
tree=$1
out=$2
work=$(mktemp -d)
# /tmp is an overlay on the host's /tmp, which cannot back a loop device.
mount -t tmpfs -o size=320M tmpfs "$work"
truncate -s 256M "$work/ext4.img"
mkfs.ext4 -q -F "$work/ext4.img"
mkdir "$work/scratch"
loopdev=$(losetup -f --show "$work/ext4.img")
mount -t ext4 "$loopdev" "$work/scratch"
set +e
BUILDID_SCRATCH_DIR="$work/scratch" \
	make -C "$tree/tools/testing/selftests" TARGETS=buildid O="$out" \
	CLANG="${CLANG:-clang-19}" run_tests
status=$?
umount "$work/scratch"
losetup -d "$loopdev"
umount "$work"
exit $status
