#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs in the guest for 'make run' (and the kselftest stage of 'make test'):
# list the executable file mappings of a running process with the build IDs
# the buildid tool reports, through PROCMAP_QUERY and through its fallback
# (/proc/PID/maps and the files read in user space), next to what
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
out=$(mktemp)
fail=0

# $1: the tool's option selecting the path, $2: its name in the output.
check() {
	echo
	echo "== $2 =="
	# shellcheck disable=SC2086
	if ! "$tool" $1 "$pid" > "$out"; then
		echo "buildid $1 $pid failed"
		fail=1
		return
	fi
	n=0
	while read -r range perms offset id path; do
		want=$(readelf -n "$path" 2>/dev/null | sed -n 's/^ *Build ID: *//p' | head -n 1)
		[ -n "$want" ] || want=-
		if [ "$id" = "$want" ]; then verdict=same; else verdict=DIFFERENT; fail=1; fi
		n=$((n + 1))
		echo "$range $perms $offset $path"
		echo "    $2 build ID: $id"
		echo "    readelf -n build ID: $want   [$verdict]"
		# The same mapping asked for by address.
		start=${range%-*}
		# shellcheck disable=SC2086
		by_addr=$("$tool" $1 "$pid" "$start" | cut -d' ' -f5)
		if [ "$by_addr" != "$id" ]; then
			echo "    by address $start: $by_addr   [DIFFERENT]"
			fail=1
		fi
	done < "$out"
	if [ "$n" -eq 0 ]; then
		echo "no executable file mappings found"
		fail=1
	fi
	echo "$2: $n mappings checked"
}

check "" "PROCMAP_QUERY"
check "--fallback" "fallback (/proc/PID/maps + files)"
kill "$pid"
rm -f "$out"
echo
[ "$fail" -eq 0 ] && echo "both paths agree with readelf -n for every mapping" ||
	echo "the buildid tool and readelf -n disagree"
exit "$fail"
