#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install what building, booting and testing the kernel needs.  Idempotent:
# every step first checks whether its result is already there.
#
# Everything the harness runs comes from here: Debian packages (found in
# /usr/bin, /usr/sbin, /bin, /sbin), bindgen-cli built with Debian's cargo
# into $CACHE/tools, and virtme-ng in a venv made with Debian's python3.
# The harness runs with only those directories on PATH (see
# pin_environment() in harness/kharness/common.py), so a program that a user installed by hand
# elsewhere can neither hide a missing step here nor replace a pinned one.
set -euo pipefail

BINDGEN_VERSION=0.73.2
VIRTME_NG_VERSION=1.42
CACHE=${BUILDID_CACHE:-$HOME/.cache/rust-buildid}
VENV=$CACHE/venv
TOOLS=$CACHE/tools

APT_PACKAGES=(
	linux-source-6.12
	rustc-web rust-web-src rust-web-clippy rustfmt-web cargo-web
	clang-19 lld-19 llvm-19 libclang-19-dev
	pahole qemu-system-x86
	make gcc patch flex bison bc libelf-dev libssl-dev cpio kmod xz-utils
	python3 python3-venv binutils busybox-static e2fsprogs perl util-linux
	libbpf-dev libcap-dev linux-perf rsync git xfsprogs
	# libbpf-sys (tools/buildid record-exits) builds libbpf against these.
	pkg-config zlib1g-dev
)

log() { echo "[deps] $*" >&2; }

missing=()
for p in "${APT_PACKAGES[@]}"; do
	status=$(dpkg-query -W -f '${Status}' "$p" 2>/dev/null || true)
	[[ $status == "install ok installed" ]] || missing+=("$p")
done
if ((${#missing[@]})); then
	[[ $(id -u) == 0 ]] || { log "need root to install: ${missing[*]}"; exit 1; }
	log "installing Debian packages: ${missing[*]}"
	apt-get update -q
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# Debian's cargo and rustc (cargo-web, rustc-web), never one found on PATH:
# the kernel needs rustc-web anyway, and a rustup toolchain is not ours.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
CARGO=/usr/bin/cargo
export RUSTC=/usr/bin/rustc
# cargo looks for subcommands in CARGO_HOME/bin before PATH: ours has none.
export CARGO_HOME=$CACHE/cargo

if [[ $("$TOOLS/bin/bindgen" --version 2>/dev/null || true) != "bindgen $BINDGEN_VERSION" ]]; then
	log "installing bindgen-cli $BINDGEN_VERSION into $TOOLS (about 3 minutes)"
	"$CARGO" install --locked --force --root "$TOOLS" "bindgen-cli@$BINDGEN_VERSION"
fi

if [[ $("$VENV/bin/vng" --version 2>/dev/null || true) != *"$VIRTME_NG_VERSION"* ]] ||
	[[ ! -x $VENV/bin/virtme-run ]] ||
	[[ $(readlink -f "$VENV/bin/python3") != /usr/bin/python3* ]]; then
	log "installing virtme-ng $VIRTME_NG_VERSION into $VENV"
	rm -rf "$VENV"
	/usr/bin/python3 -m venv "$VENV"
	"$VENV/bin/pip" install -q "virtme-ng==$VIRTME_NG_VERSION"
fi
