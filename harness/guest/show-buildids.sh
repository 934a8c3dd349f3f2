#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs in the guest for 'make run': list the executable file mappings of a
# running process with the build IDs PROCMAP_QUERY returns, next to what
# 'readelf -n' says for the same files.  Exits 1 on any disagreement.
tool=$1
sleep 600 &
pid=$!
# Wait until the child has exec'ed sleep and mapped its libraries.
for _ in 1 2 3 4 5 6 7 8 9 10; do
	case $(readlink /proc/$pid/exe) in */sleep) break ;; esac
	sleep 0.1
done
if zcat /proc/config.gz 2>/dev/null | grep -q '^CONFIG_RUST_BUILDID=y'; then
	impl="Rust (CONFIG_RUST_BUILDID=y)"
else
	impl="C (lib/buildid.c)"
fi
echo "kernel $(uname -r); build IDs served by the $impl implementation"
echo "process $pid: $(readlink /proc/$pid/exe)"
echo
out=$(mktemp)
if ! "$tool" "$pid" > "$out"; then
	kill "$pid"
	exit 1
fi
fail=0
n=0
while read -r range perms offset id path; do
	want=$(readelf -n "$path" 2>/dev/null | sed -n 's/^ *Build ID: *//p' | head -n 1)
	[ -n "$want" ] || want=-
	if [ "$id" = "$want" ]; then verdict=same; else verdict=DIFFERENT; fail=1; fi
	n=$((n + 1))
	echo "$range $perms $offset $path"
	echo "    PROCMAP_QUERY build ID: $id"
	echo "    readelf -n build ID:    $want   [$verdict]"
done < "$out"
kill "$pid"
rm -f "$out"
echo
if [ "$n" -eq 0 ]; then
	echo "no executable file mappings found"
	exit 1
fi
[ "$fail" -eq 0 ] && echo "all $n mappings: PROCMAP_QUERY agrees with readelf -n" ||
	echo "PROCMAP_QUERY and readelf -n disagree"
exit "$fail"
