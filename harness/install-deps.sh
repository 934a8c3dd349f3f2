#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install what building, booting and testing the kernel needs.  Idempotent:
# every step first checks whether its result is already there.
set -euo pipefail

BINDGEN_VERSION=0.73.2
VIRTME_NG_VERSION=1.42
CACHE=${BUILDID_CACHE:-$HOME/.cache/rust-buildid}
VENV=$CACHE/venv

APT_PACKAGES=(
	linux-source-6.12
	rustc-web rust-web-src rust-web-clippy rustfmt-web cargo-web
	clang-19 lld-19 llvm-19 libclang-19-dev
	pahole qemu-system-x86
	make gcc patch flex bison bc libelf-dev libssl-dev cpio kmod xz-utils
	python3 python3-venv binutils busybox-static e2fsprogs perl util-linux
	libbpf-dev libcap-dev linux-perf rsync
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

# The kernel is built with Debian's rustc; host crates use whatever cargo is
# on PATH, falling back to Debian's.
if ! command -v cargo >/dev/null; then
	log "no cargo on PATH, using /usr/bin/cargo from cargo-web"
fi
CARGO=$(command -v cargo || echo /usr/bin/cargo)

bindgen_ok() {
	local b
	b=$(command -v bindgen || echo "$HOME/.cargo/bin/bindgen")
	[[ -x $b ]] && [[ $("$b" --version 2>/dev/null) == "bindgen $BINDGEN_VERSION" ]]
}
if ! bindgen_ok; then
	log "installing bindgen-cli $BINDGEN_VERSION"
	"$CARGO" install --locked "bindgen-cli@$BINDGEN_VERSION"
fi

if [[ $("$VENV/bin/vng" --version 2>/dev/null || true) != *"$VIRTME_NG_VERSION"* ]]; then
	log "installing virtme-ng $VIRTME_NG_VERSION into $VENV"
	rm -rf "$VENV"
	python3 -m venv "$VENV"
	"$VENV/bin/pip" install -q "virtme-ng==$VIRTME_NG_VERSION"
fi
