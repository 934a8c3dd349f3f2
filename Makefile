# SPDX-License-Identifier: GPL-2.0
#
# Drives the project: install the toolchain, lay our files over Debian's
# linux-source-6.12, build the kernel, boot it under virtme-ng, run tests.
# This file is never copied into the kernel tree.

SHELL := /bin/bash
# Debian's python3, as install-deps.sh installs it; the harness then runs
# everything else with a PATH of only what install-deps.sh installed.
KHARNESS := PYTHONPATH=$(CURDIR)/harness /usr/bin/python3 -m kharness
TIMEOUT ?= 600

FUZZ_SECONDS ?= 600

.PHONY: help deps tree config build vm run test test-host test-kunit \
	test-kselftest test-harness test-lint test-kcsan bpf-selftests fixes-check bench fuzz mutants series series-check \
	clean clean-cache

help:
	@echo "make run         build, boot, show build IDs of a process via PROCMAP_QUERY"
	@echo "make test        build and run every test; ends with 'N passed, N failed'"
	@echo "make bench       build a kernel without debug options, run the benchmarks, write BENCHMARKS.md"
	@echo "make deps        install the toolchain (idempotent)"
	@echo "make tree        extract the kernel source and apply the overlay"
	@echo "make config      generate and check the kernel .config"
	@echo "make build       build the kernel (incremental)"
	@echo "make vm CMD=...  boot the kernel and run CMD as root (harness/vm-run CMD exits with CMD's status)"
	@echo "make test-host | test-lint | test-kunit | test-kselftest | test-harness   one test stage"
	@echo "make test-kcsan  build a KCSAN kernel, run the build ID cache's KUnit suite in it (not in 'make test')"
	@echo "make bpf-selftests  upstream's test_verifier and test_progs subset on a pristine and the patched kernel (long)"
	@echo "make fixes-check the fixes series alone on pristine 6.12: its BPF selftests pass with it, fail without (long)"
	@echo "make series      write the patch series against Debian's 6.12 to out/series (git format-patch)"
	@echo "make series-check  checkpatch --strict each patch; build after each patch and with options off (long)"
	@echo "make mutants     build and boot kernels with broken readers: the tests must fail (MUTANTS=...)"
	@echo "make fuzz        differential fuzzing of the parser against lib/buildid.c (FUZZ_SECONDS=600)"
	@echo "make clean       remove host build output (target/)"
	@echo "make clean-cache remove the kernel source and build cache"

deps:
	@harness/install-deps.sh

tree: deps
	@$(KHARNESS) tree

config: deps
	@$(KHARNESS) config

build: deps
	@$(KHARNESS) build

vm: deps
	@$(KHARNESS) vm --timeout $(TIMEOUT) -- $(CMD)

run: deps
	@$(KHARNESS) run

test: deps
	@$(KHARNESS) test

bench: deps
	@$(KHARNESS) bench

test-host: deps
	@$(KHARNESS) test host

test-kunit: deps
	@$(KHARNESS) test build kunit

test-kselftest: deps
	@$(KHARNESS) test build kselftest

test-harness: deps
	@$(KHARNESS) test build harness

test-lint: deps
	@$(KHARNESS) test build lint

test-kcsan: deps
	@$(KHARNESS) kcsan

bpf-selftests: deps
	@$(KHARNESS) bpf-selftests

fixes-check: deps
	@$(KHARNESS) fixes-check

series: deps
	@$(KHARNESS) series

series-check: deps
	@$(KHARNESS) series-check $(if $(FROM),--from $(FROM))

mutants: deps
	@$(KHARNESS) mutants $(MUTANTS)

fuzz: deps
	@$(KHARNESS) fuzz --seconds $(FUZZ_SECONDS)

clean:
	rm -rf target out

clean-cache:
	rm -rf $${BUILDID_CACHE:-$$HOME/.cache/rust-buildid}/{src,tree,build,runs,series}
