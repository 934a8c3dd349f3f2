#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs in the guest for 'make bench': an ext4 scratch directory (the parser
# benchmarks need a page cache that can be dropped), the build ID sample
# module, then the benchmark programs: buildid_bench, and procmap_bench on
# two real processes, the python3 and perl workloads of the selftests.
#   $1: the buildid_bench binary   $2: a large ELF file to parse
#   $3: the directory of buildid_workload.py and .pl (source files: the
#       kselftest build does not copy them next to the programs)
#   $4: tools/buildid's binary, whose record-exits the benchmark measures
set -e
. "$(dirname "$0")/ext4-scratch.sh"
scratch_mount 300
modprobe rust_buildid
dir=$(dirname "$1")
python_workload="exec python3 $3/buildid_workload.py"
perl_workload="exec perl $3/buildid_workload.pl"

# The files that the command $1 maps once it printed its first line.
mapped_files() {
	mkfifo "$work/ready"
	sh -c "$1" > "$work/ready" &
	pid=$!
	read -r _ < "$work/ready"
	awk '$6 ~ /^\// { print $6 }' "/proc/$pid/maps" | sort -u
	kill -9 "$pid"
	wait "$pid" 2> /dev/null || true
	rm "$work/ready"
}

set +e
BUILDID_SCRATCH_DIR="$scratch" BUILDID_TOOL="$4" "$1" "$2"
status=$?

# vng's / is 9p, where every open() or stat() is a round trip to the host:
# for procmap_bench the workloads' files are copied to ext4 and bind-mounted
# over the originals, so that its text side reads them from a local file
# system, as on a real machine (after buildid_bench, whose availability
# rows are about 9p too).  The binds live in a mount namespace of their own,
# which goes away with procmap_bench: every program started meanwhile maps
# the copies of libc and ld.so, so they could not be unmounted.
if [ $status -eq 0 ]; then
	files=$( (mapped_files "$python_workload"; mapped_files "$perl_workload") | sort -u)
	FILES=$files unshare -m --propagation private sh -ec '
		n=0
		for file in $FILES; do
			n=$((n + 1))
			cp "$file" "$1/bound-$n"
			mount --bind "$1/bound-$n" "$file"
		done
		shift
		exec "$@"' sh "$scratch" "$dir/procmap_bench" -r 41 \
		"python3=cmd:$python_workload" "perl=cmd:$perl_workload"
	status=$?
fi
modprobe -r rust_buildid
scratch_umount
exit $status
