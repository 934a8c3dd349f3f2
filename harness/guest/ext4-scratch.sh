# SPDX-License-Identifier: GPL-2.0
#
# Sourced by the guest scripts: an ext4 file system on a loop device, for
# tests that need a page cache that can be evicted (unlike tmpfs) and that
# keeps what is written (unlike the 9p mounts).
#   scratch_mount MiB   sets $work (a tmpfs) and $scratch (the ext4 mount)
#   scratch_umount      undoes it

buildid_cache_drain() {
	drain=/sys/kernel/debug/buildid_cache/drain
	[ -e /proc/sys/kernel/buildid_cache ] || return 0
	[ -e "$drain" ] || mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null || true
	[ ! -e "$drain" ] || echo 1 > "$drain"
}

scratch_mount() {
	work=$(mktemp -d)
	# /tmp is an overlay on the host's /tmp, which cannot back a loop device.
	mount -t tmpfs -o size=$(($1 + 64))M tmpfs "$work"
	truncate -s "$1M" "$work/ext4.img"
	mkfs.ext4 -q -F "$work/ext4.img"
	scratch=$work/scratch
	mkdir "$scratch"
	scratch_loopdev=$(losetup -f --show "$work/ext4.img")
	mount -t ext4 "$scratch_loopdev" "$scratch"
}

scratch_umount() {
	# Fills the build ID cache queued hold file references.
	buildid_cache_drain
	umount "$scratch"
	losetup -d "$scratch_loopdev"
	umount "$work"
}
