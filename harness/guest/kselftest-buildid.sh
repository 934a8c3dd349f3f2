#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs in the guest for the buildid kselftests: gives them an ext4 scratch
# directory (its page cache can be evicted, unlike tmpfs, and it is not the
# 9p root), then runs the suite the documented way.  The binaries were
# built on the host into the same O= directory, so make only checks them.
#   $1: kernel source tree   $2: kernel build (O=) directory
# BUILDID_TOOL (tools/buildid's binary, for exit_symbolize) passes through.
set -e
. "$(dirname "$0")/ext4-scratch.sh"
scratch_mount 256
set +e
BUILDID_SCRATCH_DIR="$scratch" \
	make -C "$1/tools/testing/selftests" TARGETS=buildid O="$2" \
	CLANG="${CLANG:-clang-19}" run_tests
status=$?
scratch_umount
exit $status
