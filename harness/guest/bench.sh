#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs in the guest for 'make bench': an ext4 scratch directory (the parser
# benchmarks need a page cache that can be dropped), the build ID sample
# module, then the benchmark program.
#   $1: the buildid_bench binary   $2: a large ELF file to parse
set -e
. "$(dirname "$0")/ext4-scratch.sh"
scratch_mount 300
modprobe rust_buildid
set +e
BUILDID_SCRATCH_DIR="$scratch" "$1" "$2"
status=$?
modprobe -r rust_buildid
scratch_umount
exit $status
