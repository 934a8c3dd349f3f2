#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs in the guest (the kselftest stage of 'make test', after
# show-buildids.sh): 'buildid record-exits' while processes exit, are
# killed and exec another binary; every mapping it recorded for them has
# the build ID that 'readelf -n' finds in the file at its path; and it
# refuses to run, saying why, without root, BTF or the kfunc.  Exits 1 on
# any disagreement, a process it did not record, or a wrong refusal.
tool=$1
out=$(mktemp)
err=$(mktemp)
fail=0

"$tool" record-exits -o "$out" 2> "$err" &
rec=$!
for _ in $(seq 300); do
	grep -q recording "$err" && break
	sleep 0.2
done

# Waits until process $1 runs the program $2.
wait_exec() {
	for _ in $(seq 50); do
		case $(readlink "/proc/$1/exe") in */"$2") return ;; esac
		sleep 0.1
	done
}

/bin/true &
exited=$!
wait "$exited"
sleep 600 &
killed=$!
wait_exec "$killed" sleep
kill -KILL "$killed"
wait "$killed"
# A shell under its own name: the exec of /bin/true is then told apart
# from the exec that started the shell.
cp /bin/sh "$out.rx-sh"
"$out.rx-sh" -c 'sleep 0.5; exec /bin/true' &
execed=$!
wait "$execed"
sleep 1
# Background jobs of a script ignore SIGINT; SIGTERM stops the tool too.
kill -TERM "$rec"
wait "$rec"
status=$?
echo
echo "== buildid record-exits =="
cat "$err"
[ "$status" -eq 0 ] || { echo "buildid record-exits exited $status"; fail=1; }

# $1: what the process did, $2: pattern of its lines ("exit PID COMM").
expect() {
	if grep -q "^$2 " "$out"; then
		echo "$1: recorded ($2)"
	else
		echo "$1: not recorded ($2) [DIFFERENT]"
		fail=1
	fi
}
expect "exited" "exit $exited true"
expect "killed with SIGKILL" "exit $killed sleep"
expect "exec'ed /bin/true" "exec $execed $(basename "$out.rx-sh" | cut -c1-15)"
expect "exited after its exec" "exit $execed true"

for pid in "$exited" "$killed" "$execed"; do
	grep "^e[a-z]* $pid " "$out"
done > "$err"
while read -r event pid comm range offset dev inode path id rest; do
	want=$(readelf -n "$path" 2>/dev/null | sed -n 's/^ *Build ID: *//p' | head -n 1)
	[ -n "$want" ] || want=-
	if [ "$id" = "$want" ]; then verdict=same; else verdict=DIFFERENT; fail=1; fi
	echo "$event $pid $comm $range $offset $dev $inode $path: $id $rest   [$verdict]"
done < "$err"

# What it says, and its status, where it cannot work: $1 what is missing,
# $2 a word its message must have, the rest the command.
refuses() {
	what=$1 word=$2
	shift 2
	if msg=$("$@" 2>&1); then
		echo "without $what: exited 0 [DIFFERENT]"
		fail=1
	elif echo "$msg" | grep -q "$word"; then
		echo "without $what: $msg"
	else
		echo "without $what: \"$msg\" does not say $word [DIFFERENT]"
		fail=1
	fi
}
# nobody may not reach the tool where it was built (a checkout in root's
# home, mode 0700): it runs a copy in a directory that it can search.
public=$(mktemp -d)
chmod 755 "$public"
cp "$tool" "$public/buildid"
chmod 755 "$public/buildid"
if su nobody -s /bin/sh -c "test -x $public/buildid"; then
	refuses root "needs root" su nobody -s /bin/sh -c "$public/buildid record-exits"
else
	echo "without root: nobody cannot execute $public/buildid [DIFFERENT]"
	fail=1
fi
refuses BTF "no BTF" unshare -m sh -c "mount -t tmpfs none /sys/kernel/btf && $tool record-exits"
refuses "the kfunc" "bpf_vma_build_id" \
	unshare -m sh -c "mount --bind /dev/null /sys/kernel/btf/vmlinux && $tool record-exits"
rm -f "$out" "$err" "$out.rx-sh"
rm -rf "$public"
exit "$fail"
