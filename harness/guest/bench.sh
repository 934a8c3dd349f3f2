#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs in the guest for 'make bench': an ext4 scratch directory (the parser
# benchmarks need a page cache that can be dropped), the build ID sample
# module, then the benchmark program.
#   $1: the buildid_bench binary   $2: a large ELF file to parse
set -e
work=$(mktemp -d)
# /tmp is an overlay on the host's /tmp, which cannot back a loop device.
mount -t tmpfs -o size=400M tmpfs "$work"
truncate -s 300M "$work/ext4.img"
mkfs.ext4 -q -F "$work/ext4.img"
mkdir "$work/scratch"
loopdev=$(losetup -f --show "$work/ext4.img")
mount -t ext4 "$loopdev" "$work/scratch"
modprobe rust_buildid
set +e
BUILDID_SCRATCH_DIR="$work/scratch" "$1" "$2"
status=$?
modprobe -r rust_buildid
umount "$work/scratch"
losetup -d "$loopdev"
umount "$work"
exit $status
