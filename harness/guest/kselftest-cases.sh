#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs in the guest for 'make mutants': one buildid kselftest program with
# its own options (the cases to run), on the same ext4 scratch directory as
# the kselftest stage.
#   $1: the program   the rest: its options, e.g. -r dev.partly_cached_ext4
set -e
. "$(dirname "$0")/ext4-scratch.sh"
scratch_mount 256
set +e
program=$1
shift
BUILDID_SCRATCH_DIR="$scratch" "$program" "$@"
status=$?
scratch_umount
exit $status
