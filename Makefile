# fwembed: build a kernel with firmware built in, boot it in QEMU, verify it.
# 'make help' lists the targets and variables.

BOARD ?= versatile
V ?= 0
PYTHON := /usr/bin/python3
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

# Everything generated goes below $(BUILD).
BUILD := $(CURDIR)/build

FWEMBED := $(PYTHON) $(CURDIR)/tools/fwembed
# The test harness: booting boards in QEMU and judging their logs.
HARNESS := $(PYTHON) $(CURDIR)/harness/fwembed-harness

# $(call shell-quote,TEXT): TEXT as one shell word. FIRMWARE_DIR,
# INSTALL_FW_PATH and BOARD may hold spaces: the first two reach recipes
# only this way, and make never uses them as targets or prerequisites
# (fwembed.d escapes the files it names).
shell-quote = '$(subst ','"'"',$(1))'
empty :=
space := $(empty) $(empty)

# The kernel: Debian's linux-source-$(KERNEL) with the series of
# kernel-patch/$(KERNEL)/, or a copy of KERNEL_SRC, whose version its
# Makefile gives. Each version has a tree of its own, build/linux-$(KERNEL),
# and build directories of its own: build/BOARD for the default kernel,
# build/BOARD-$(KERNEL) for another.
KERNELS := $(patsubst kernel-patch/%/series,%,$(wildcard kernel-patch/*/series))
DEFAULT_KERNEL := 6.1
ifneq ($(KERNEL_SRC),)
KERNEL_SRC_VERSION := $(shell sed -n 's/^VERSION = //p; s/^PATCHLEVEL = //p' \
	-- $(call shell-quote,$(KERNEL_SRC))/Makefile 2>/dev/null | paste -sd.)
KERNEL ?= $(KERNEL_SRC_VERSION)
endif
KERNEL ?= $(DEFAULT_KERNEL)
TREE := $(BUILD)/linux-$(KERNEL)
PATCHES := $(CURDIR)/kernel-patch/$(KERNEL)
KERNEL_SUFFIX := $(if $(filter $(DEFAULT_KERNEL),$(KERNEL)),,-$(KERNEL))

# BOARD is a folder under boards/ or a path to a board folder. make cannot
# work with a path that has spaces, so such a folder is reached through a
# symlink without them: build/board-links/NAME, spaces in NAME made '_'.
BOARD_PATH := $(if $(findstring /,$(BOARD)),$(BOARD),boards/$(BOARD))
ifeq ($(words $(BOARD_PATH)),1)
BOARD_DIR := $(abspath $(BOARD_PATH))
else
BOARD_DIR := $(BUILD)/board-links/$(subst $(space),_,$(shell basename -- $(call shell-quote,$(BOARD_PATH))))
$(shell mkdir -p $(BUILD)/board-links && ln -sfn -- "$$(realpath -m -- $(call shell-quote,$(BOARD_PATH)))" $(BOARD_DIR))
endif
BOARD_NAME := $(notdir $(BOARD_DIR))

# OUT_NAME names the build directory; make bench uses its own.
OUT_NAME ?= $(BOARD_NAME)$(KERNEL_SUFFIX)
OUT := $(BUILD)/$(OUT_NAME)

# The board's settings: fwembed's own board.cfg parser writes them as
# BOARD_<KEY> variables (BOARD_ARCH, BOARD_CROSS_COMPILE, ...) into
# board.mk, which make includes, remaking it first when board.cfg changed.
# A broken board folder stops make here, before anything is built.
BOARD_MK := $(OUT)/board.mk
ifneq ($(filter-out help clean distclean,$(or $(MAKECMDGOALS),help)),)
ifneq ($(KERNEL_SRC),)
ifeq ($(KERNEL_SRC_VERSION),)
$(error KERNEL_SRC=$(KERNEL_SRC): not a kernel source tree (its Makefile gives no version))
endif
ifneq ($(KERNEL_SRC_VERSION),$(KERNEL))
$(error KERNEL_SRC=$(KERNEL_SRC) is Linux $(KERNEL_SRC_VERSION), not KERNEL=$(KERNEL))
endif
endif
ifeq ($(filter $(KERNEL),$(KERNELS)),)
$(error KERNEL=$(KERNEL): no series in kernel-patch/$(KERNEL)/ (there are: $(KERNELS)))
endif
include $(BOARD_MK)
endif
$(BOARD_MK): $(wildcard $(BOARD_DIR)/board.cfg) $(CURDIR)/tools/fwembedlib/board.py
	$(Q)$(FWEMBED) board $(BOARD_DIR) --kernel $(KERNEL) --make-vars $@
KOUT := $(OUT)/linux
FWOUT := $(OUT)/fw
# The kernel configuration names FWOUT relative to the kernel build directory
# ("../fw"): the same for every board, so that two build directories of one
# configuration have the same autoconf.h and share ccache's direct-mode hits.
FWOUT_FROM_KOUT = $(shell realpath -m --relative-to=$(KOUT) $(FWOUT))
KERNEL_IMAGE := $(KOUT)/$(BOARD_IMAGE)
# The device tree: built with the kernel, made by QEMU (dtb = qemu), or none.
DTB_FILE := $(if $(filter none,$(BOARD_DTB)),,$(if $(filter qemu,$(BOARD_DTB)),$(OUT)/qemu.dtb,$(KOUT)/$(BOARD_DTB)))
# Kbuild names a device tree by its path below arch/ARCH/boot/dts, as in
# make arm/versatile-pb.dtb (Linux 6.5 moved 32-bit ARM's trees into vendor
# folders).
KERNEL_TARGETS := $(strip $(notdir $(BOARD_IMAGE)) $(if $(filter none qemu,$(BOARD_DTB)),,$(lastword $(subst /boot/dts/, ,$(BOARD_DTB)))))
# U-Boot images: a legacy uImage, a FIT (kernel, device tree, initramfs), and
# for boards that boot through U-Boot, the disk it boots from.
UIMAGE := $(OUT)/uImage
FIT := $(OUT)/image.fit
UBOOT_DISK := $(OUT)/disk.img
# mkimage stamps images with SOURCE_DATE_EPOCH: the same inputs give the same image.
SOURCE_DATE_EPOCH ?= 0

# make firmware_install: where the entries marked install=yes go
# (INSTALL_FW_ALL=1: every entry).
INSTALL_FW_PATH ?= $(OUT)/firmware-install
ifneq ($(FIRMWARE_DIR),)
FW_INPUT := --dir $(call shell-quote,$(shell realpath -m -- $(call shell-quote,$(FIRMWARE_DIR))))
else
FW_INPUT := --list $(BOARD_DIR)/firmware.list
endif
# How entries are stored when the list does not say: none, xz, zstd or auto.
COMPRESS ?= none

# Reproducible kernel builds: the same inputs give the same vmlinux. Without
# KBUILD_BUILD_VERSION, the "#N" of the version string counts the links done
# in the build directory (its .version file), so it differs between builds.
KBUILD_BUILD_TIMESTAMP ?= 1970-01-01 00:00:00 UTC
KBUILD_BUILD_USER ?= fwembed
KBUILD_BUILD_HOST ?= fwembed
KBUILD_BUILD_VERSION ?= 1
export KBUILD_BUILD_TIMESTAMP KBUILD_BUILD_USER KBUILD_BUILD_HOST KBUILD_BUILD_VERSION

CCACHE := $(shell command -v ccache 2>/dev/null)
export CCACHE_BASEDIR := $(CURDIR)
# With CCACHE_BASEDIR, ccache hands the compiler source paths relative to the
# build directory (../../linux-6.1/kernel/fork.c), which the kernel's
# -fmacro-prefix-map=$(srctree)/= does not match: __FILE__ strings would name
# the build directory's depth and differ from a build without ccache. Strip
# that spelling of the source tree too. $(1) is the build directory, $(2)
# the source tree (default $(TREE)).
ccache-prefix-map = KCPPFLAGS="$(strip -fmacro-prefix-map=$(shell realpath -m --relative-to=$(1) $(or $(2),$(TREE)))/= $(KCPPFLAGS))"
# CC_WRAPPER runs the kernel's compiler through a wrapper, such as distcc to
# share builds with other machines. With ccache it becomes ccache's
# CCACHE_PREFIX, so that only the compilations that miss the cache go out.
CC_WRAPPER ?=
kernel-cc = $(if $(CCACHE),ccache $(BOARD_CROSS_COMPILE)gcc,$(if $(CC_WRAPPER),$(CC_WRAPPER) $(BOARD_CROSS_COMPILE)gcc))
# The host programs that Kbuild compiles first in every new build directory
# (kconfig, modpost, dtc, objtool) go through ccache too: they were
# a third or more of the processor time of a tinyconfig build of the loader's
# directory (38.5 and 42.8 s without, 25.1 s with).
host-cc = $(if $(CCACHE),ccache gcc)
# binutils' nm loads every plugin in /usr/lib/bfd-plugins, and where clang is
# installed one of them is LLVM's: 87 ms a call here, against 12 ms. Linux
# 6.1 runs nm on every object it compiles (scripts/check-local-export), so
# that was 30% of the processor time of x86_64's kernel build from ccache.
# GCC's gcc-nm runs the same nm with GCC's plugin only; its output is the same.
kernel-nm = $(if $(shell command -v $(BOARD_CROSS_COMPILE)gcc-nm 2>/dev/null),$(BOARD_CROSS_COMPILE)gcc-nm)
kmake = $(if $(CCACHE),$(if $(CC_WRAPPER),CCACHE_PREFIX="$(CC_WRAPPER)" ))$(MAKE) --no-print-directory \
	-C $(or $(2),$(TREE)) O=$(1) ARCH=$(BOARD_ARCH) CROSS_COMPILE=$(BOARD_CROSS_COMPILE) \
	$(if $(kernel-cc),CC="$(kernel-cc)") $(if $(host-cc),HOSTCC="$(host-cc)") $(if $(kernel-nm),NM=$(kernel-nm)) \
	$(if $(CCACHE),$(call ccache-prefix-map,$(1),$(2))) V=$(V) -j$(JOBS)
KMAKE = $(call kmake,$(KOUT))

# Debian packages. 'fwembed gen' needs Python and the compressors only;
# a kernel build needs the rest of BUILD_PACKAGES.
GEN_PACKAGES := python3 xz-utils zstd
BUILD_PACKAGES := make gcc libc6-dev bc bison flex libssl-dev libelf-dev cpio patch ccache \
	$(GEN_PACKAGES) $(if $(KERNEL_SRC),,linux-source-$(KERNEL)) \
	$(if $(filter distcc,$(notdir $(firstword $(CC_WRAPPER)))),distcc)
# mkimage and the device tree compiler it runs for FIT images; sfdisk and
# mtools for the boot disk; Debian's U-Boot builds for QEMU.
UBOOT_PACKAGES := u-boot-tools device-tree-compiler mtools fdisk u-boot-qemu
# 'fwembed report', 'ls', 'extract', 'verify' and 'needs' read ELF files with
# pyelftools; 'ls' and the others read FIT images with libfdt.
REPORT_PACKAGES := python3-pyelftools python3-libfdt
# The tests that need no kernel (make test-quick): no linux-source, no QEMU;
# wireless-regdb holds files that the versatile board's list names.
# The generated table is assembled with the cross toolchain of every
# architecture the tests cover: arm, arm64, riscv64, and the host's x86_64.
QUICK_PACKAGES := $(GEN_PACKAGES) make patch cpio python3-pytest python3-hypothesis \
	$(REPORT_PACKAGES) python3-matplotlib firmware-linux-free gcc-arm-linux-gnueabi \
	binutils-arm-linux-gnueabi gcc-aarch64-linux-gnu gcc-riscv64-linux-gnu gcc \
	u-boot-tools device-tree-compiler mtools fdisk wireless-regdb
# make check boots every board: the 64-bit one needs the arm64 cross compiler.
# It builds one board through distccd (tests/test_distcc.py).
CHECK_PACKAGES := $(QUICK_PACKAGES) python3-pytest-xdist python3-ply git perl \
	libc6-dev-armel-cross qemu-system-arm $(UBOOT_PACKAGES) gcc-aarch64-linux-gnu libc6-dev-arm64-cross distcc
# INSTALL_DEPS=no: only check that the packages are there (the tests run
# make so; 'make check' installed everything before they started).
INSTALL_DEPS ?= yes
install-deps = scripts/install-deps $(if $(filter no,$(INSTALL_DEPS)),--check)

ifeq ($(V),1)
Q :=
quiet = @:
else
Q := @
quiet = @echo
endif

.NOTPARALLEL:
.DELETE_ON_ERROR:
.PHONY: help run kernel fw config tree deps gen-deps report-deps board-check initramfs kunit bench stress check \
	kselftest kselftest-kernel cfg80211 guest-deps \
	test-quick firmware_install report nofw-kernel uimage fit dtb uboot-deps uboot-disk clean distclean \
	FORCE
FORCE:

help:
	@echo 'fwembed: firmware built into Linux kernels, verified in QEMU'
	@echo
	@echo 'Targets:'
	@echo '  run            build the kernel for BOARD with its firmware and boot it in QEMU;'
	@echo '                 every firmware entry is requested and checked (exit 1 if any fails);'
	@echo '                 a boot = uboot board boots its FIT through U-Boot from a disk image'
	@echo '  kernel         build the kernel image and dtb only'
	@echo '  fw             generate the firmware table into build/BOARD/fw only'
	@echo '  firmware_install  install the entries marked install=yes (INSTALL_FW_ALL=1: every'
	@echo '                 entry) to INSTALL_FW_PATH/NAME, mode 0644'
	@echo '  report         one row per firmware entry (sizes, digest, license, built in or not),'
	@echo '                 totals, and vmlinux growth over a build without firmware;'
	@echo '                 writes build/BOARD/report.json'
	@echo '  uimage         wrap the kernel as a legacy U-Boot uImage at the board'"'"'s kernel_load:'
	@echo '                 build/BOARD/uImage'
	@echo '  fit            build a FIT image (kernel, device tree, test initramfs, sha256 hashes):'
	@echo '                 build/BOARD/image.fit, its source image.fit.its; prints mkimage -l'
	@echo '  kunit          run the KUnit suite of the patch series (kunit.py, QEMU virt)'
	@echo '  bench          measure build time and memory against 6.1'"'"'s routes, incremental builds,'
	@echo '                 lookup, table overhead, dedup, compression, and boot time built in against'
	@echo '                 the initramfs; prints one table, writes JSON and a PNG and SVG chart'
	@echo '                 to bench/results/'
	@echo '  kselftest      run the kernel'"'"'s firmware selftests in QEMU on the board'"'"'s kernel and'
	@echo '                 on the same configuration without the series, side by side, then'
	@echo '                 fw_builtin.sh on every built-in entry (versatile; armel user space)'
	@echo '  cfg80211       boot the board'"'"'s kernel with Debian'"'"'s iw: cfg80211 must accept the'
	@echo '                 signature of the built-in regulatory.db and take a country from it'
	@echo '                 (versatile; armel user space)'
	@echo '  stress         boot the sanitizer kernel (KASAN, kmemleak, lockdep, debug objects,'
	@echo '                 DEBUG_VM, fault injection) of stress/vexpress-a9 and run the built-in'
	@echo '                 firmware stress test in it; then fuzz the generator (10,000'
	@echo '                 Hypothesis examples per test)'
	@echo '  check          install every package the tests need, then run every test (pytest),'
	@echo '                 ending with its summary line'
	@echo '  test-quick     run the tests that need no kernel build'
	@echo '  clean          remove build/BOARD (build/BOARD-KERNEL for another kernel)'
	@echo '  distclean      remove build/'
	@echo
	@echo 'Variables:'
	@echo '  BOARD=name|path   a folder under boards/ or a path to a board folder (default: versatile)'
	@echo '  FIRMWARE_DIR=dir  embed every regular file below dir instead of the board'"'"'s list'
	@echo '  COMPRESS=how      store entries whose list sets no compress= as none (default), xz,'
	@echo '                    zstd or auto'
	@echo '  GEN_EXTRA=args    more tools/fwembed gen arguments'
	@echo '  KERNEL=version    the kernel: $(KERNELS) (default: $(DEFAULT_KERNEL)), Debian'"'"'s'
	@echo '                    /usr/src/linux-source-VERSION.tar.xz with kernel-patch/VERSION/;'
	@echo '                    build directories build/BOARD-VERSION but for the default'
	@echo '  KERNEL_SRC=dir    copy this Linux tree instead of Debian'"'"'s; KERNEL is read from its'
	@echo '                    Makefile'
	@echo '  EXTRA_FRAGMENTS=f more kernel config fragments, merged after the board'"'"'s'
	@echo '  OUT_NAME=name     build directory build/name (default: the board folder'"'"'s name)'
	@echo '  QEMU_EXTRA=args   more QEMU arguments for make run'
	@echo '  BENCH_PARTS=list  make bench runs only these of lookup,size,build,memory,boot'
	@echo '  CFG80211_COUNTRY=cc  make cfg80211: the country to take from the database (default: DE)'
	@echo '  GUEST_ARCH=arch   Debian architecture of the kselftest and cfg80211 guests (default: armel)'
	@echo '  STRESS_THREADS=n  make stress: stress threads (default: 8)'
	@echo '  STRESS_CYCLES=n   make stress: cycles per thread (default: 10000)'
	@echo '  INSTALL_FW_PATH=dir  where firmware_install installs (default: build/BOARD/firmware-install)'
	@echo '  INSTALL_FW_ALL=1  firmware_install installs every entry, built-in ones too'
	@echo '  INSTALL_DEPS=no   install no Debian package, only check they are there'
	@echo '  FWEMBED_FUZZ_EXAMPLES=n  make check: examples per generator fuzz test (default: 50)'
	@echo '  CHECK_KERNELS=list   make check: kernels every board boots on, whose series is built patch by patch'
	@echo '                    and runs KUnit in (default: "6.1 6.12", both)'
	@echo '  CHECK_WORKERS=n   make check: tests run side by side on n workers (default: 2)'
	@echo '  V=1               print full commands'
	@echo '  JOBS=n            parallel kernel build jobs (default: nproc)'
	@echo '  CC_WRAPPER=cmd    compile the kernel through cmd, such as distcc (with ccache: its CCACHE_PREFIX)'
	@echo
	@echo 'Boards: $(notdir $(wildcard boards/*))'

deps:
	$(Q)$(install-deps) $(BUILD_PACKAGES)

gen-deps:
	$(Q)$(install-deps) $(GEN_PACKAGES)

# The board folder was checked when board.mk was made; this adds what it
# needs to build and boot.
board-check: deps
	$(Q)$(install-deps) $(BOARD_PACKAGES)

tree: deps
	$(Q)scripts/prepare-kernel $(KERNEL) $(TREE) $(PATCHES) $(if $(KERNEL_SRC),$(abspath $(KERNEL_SRC)))

fw: gen-deps $(FWOUT)/.fwembed-stamp

# The firmware step runs only when an input changed: fwembed.d, which gen
# writes, makes its stamp depend on the list (or every folder of
# FIRMWARE_DIR) and on every source file; fw.cmd holds the command line, so
# that a new COMPRESS= or FIRMWARE_DIR= runs it too, as does a new fwembed.
FW_CMD = $(FWEMBED) gen $(FW_INPUT) --compress $(COMPRESS) --out $(FWOUT) $(GEN_EXTRA)
# Written with make's own $(file), since the command holds shell quotes; $(OUT)
# exists, since board.mk, which make has read, is in it.
$(OUT)/fw.cmd: FORCE
	$(file >$@.new,$(FW_CMD))
	$(Q)if cmp -s $@.new $@; then rm -f $@.new; else mv $@.new $@; fi

$(FWOUT)/.fwembed-stamp: $(OUT)/fw.cmd $(wildcard $(CURDIR)/tools/fwembed $(CURDIR)/tools/fwembedlib/*.py) | gen-deps
	$(quiet) '  GEN     $(FWOUT:$(CURDIR)/%=%)'
	$(Q)$(FW_CMD)

ifneq ($(filter-out help clean distclean,$(or $(MAKECMDGOALS),help)),)
-include $(FWOUT)/fwembed.d
endif

# $(call update-line,FILE,LINE): make FILE hold LINE, rewriting it only when
# it differs (so that make sees no change), through a temporary file beside it.
update-line = tmp=$$(mktemp '$(1).XXXXXX') && printf '%s\n' '$(2)' > "$$tmp" && \
	chmod 644 "$$tmp" && if cmp -s "$$tmp" '$(1)'; then rm -f "$$tmp"; else mv "$$tmp" '$(1)'; fi

# The kernel build directory belongs to one prepared tree: when the tree is
# made again (new patches), it starts afresh, since old objects may be newer
# than re-extracted sources.
config: tree board-check fw
	$(Q)if ! cmp -s $(TREE)/.fwembed-tree $(KOUT)/.fwembed-tree; then \
		if [ -d $(KOUT) ]; then echo '  CLEAN   $(KOUT:$(CURDIR)/%=%) (new kernel tree)'; fi; \
		rm -rf $(KOUT); mkdir -p $(KOUT); cp $(TREE)/.fwembed-tree $(KOUT)/; fi
	$(Q)$(call update-line,$(OUT)/fwembed.config,CONFIG_FW_LOADER_GENERATED_DIR="$(FWOUT_FROM_KOUT)")
	$(Q)$(MAKE) --no-print-directory $(if $(filter 1,$(V)),,-s) -f $(firstword $(MAKEFILE_LIST)) $(KOUT)/.config

# A board's kernel.config serves every kernel; kernel-VERSION.config, if the
# board has one, adds what only that kernel has.
FW_FRAGMENT = $(OUT)/fwembed.config
FRAGMENTS = $(BOARD_DIR)/kernel.config $(wildcard $(BOARD_DIR)/kernel-$(KERNEL).config) \
	$(abspath $(EXTRA_FRAGMENTS)) $(FW_FRAGMENT)

$(KOUT)/.config: $(FRAGMENTS) $(TREE)/.fwembed-tree
	$(quiet) '  KCONFIG $(@:$(CURDIR)/%=%) ($(BOARD_DEFCONFIG) + $(FRAGMENTS:$(CURDIR)/%=%))'
	$(Q)$(KMAKE) -s $(BOARD_DEFCONFIG)
	$(Q)$(FWEMBED) config --merge $(addprefix --fragment ,$(FRAGMENTS)) --config $@
	$(Q)$(KMAKE) -s olddefconfig
	$(Q)$(FWEMBED) config $(addprefix --fragment ,$(FRAGMENTS)) --config $@ || \
		{ mv $@ $@.rejected; exit 1; }

kernel: config
	$(quiet) '  MAKE    $(subst $(MAKE),make,$(KMAKE)) $(KERNEL_TARGETS)'
	$(Q)$(KMAKE) $(KERNEL_TARGETS)

# The test initramfs: a static init that prints the debugfs listing and
# reboots, packed by the kernel's own gen_init_cpio, followed by the
# entries marked install=yes as /lib/firmware, with the list that makes the
# boot self-test request them from there.
INITRAMFS := $(OUT)/initramfs.cpio
INITRAMFS_BASE := $(OUT)/initramfs-base.cpio
TESTFS := $(OUT)/testfs

initramfs: kernel
	$(Q)if [ ! -f $(OUT)/init ] || [ initramfs/init.c -nt $(OUT)/init ]; then \
		echo '  CC      $(OUT:$(CURDIR)/%=%)/init'; \
		$(BOARD_CROSS_COMPILE)gcc -static -Os -Wall -Werror -o $(OUT)/init initramfs/init.c; fi
	$(Q)sed 's|@INIT@|$(OUT)/init|' initramfs/initramfs.list > $(OUT)/initramfs.list
	$(quiet) '  CPIO    $(INITRAMFS_BASE:$(CURDIR)/%=%)'
	$(Q)$(KOUT)/usr/gen_init_cpio $(OUT)/initramfs.list > $(INITRAMFS_BASE)
	$(Q)rm -rf $(TESTFS) && mkdir -p $(TESTFS)
	$(Q)$(FWEMBED) install $(FW_INPUT) --dest $(TESTFS) --all-hint ''
	$(Q)if [ -n "$$(ls -A $(TESTFS))" ]; then \
		echo '  CPIO    $(TESTFS:$(CURDIR)/%=%).cpio (/lib/firmware)'; \
		$(FWEMBED) cpio --dir $(TESTFS) --out $(TESTFS).cpio && \
		cat $(INITRAMFS_BASE) $(TESTFS).cpio > $(INITRAMFS); \
	else cp $(INITRAMFS_BASE) $(INITRAMFS); fi

# A board with boot = uboot runs U-Boot in QEMU, which boots the FIT from the
# boot disk; any other board's kernel is loaded by QEMU itself.
run: $(if $(filter uboot,$(BOARD_BOOT)),uboot-disk,initramfs dtb)
	$(Q)$(HARNESS) boot --board $(BOARD_DIR) --kernel $(KERNEL_IMAGE) \
		$(if $(filter uboot,$(BOARD_BOOT)),--disk $(UBOOT_DISK),$(if $(DTB_FILE),--dtb $(DTB_FILE))) \
		--initrd $(INITRAMFS) --manifest $(FWOUT)/manifest.json --log $(OUT)/console.log \
		--kernel-config $(KOUT)/.config --kernel-tree $(TREE) \
		$(if $(QEMU_EXTRA),--qemu-extra '$(QEMU_EXTRA)')

# The kernel's own firmware selftests (tools/testing/selftests/firmware), in
# QEMU, on the board's kernel and on the same configuration built from
# Debian's tree without the series, which must pass at least as much. The
# unpatched tree and build directory sit as deep below build/kselftest as
# the board's are below build/, so that ccache reuses the board's objects.
KSELFTEST := $(BUILD)/kselftest
KSELFTEST_TREE := $(KSELFTEST)/linux-$(KERNEL)
KSELFTEST_KOUT := $(KSELFTEST)/$(OUT_NAME)/linux
kmake-unpatched = $(call kmake,$(KSELFTEST_KOUT),$(KSELFTEST_TREE))

# The user space of the make kselftest and make cfg80211 guests: Debian's
# packages of the board's architecture (GUEST_ARCH), downloaded and
# unpacked into $(GUEST_USERLAND)/root, never installed.
GUEST_ARCH ?= armel
GUEST_USERLAND := $(BUILD)/guest-userland
GUEST_PACKAGES := busybox-static bash-static coreutils diffutils gzip libc6 \
	iw libnl-3-200 libnl-genl-3-200
fetch-guest-debs = scripts/fetch-debs $(if $(filter no,$(INSTALL_DEPS)),--check) $(GUEST_ARCH) \
	$(GUEST_USERLAND) $(GUEST_PACKAGES)

guest-deps:
	$(Q)$(install-deps) --arch $(GUEST_ARCH) $(BUILD_PACKAGES)
	$(Q)$(fetch-guest-debs)

kselftest-kernel: kernel dtb guest-deps
	$(Q)scripts/prepare-kernel $(KERNEL) $(KSELFTEST_TREE) none $(if $(KERNEL_SRC),$(abspath $(KERNEL_SRC)))
	$(Q)mkdir -p $(KSELFTEST_KOUT)
	$(Q)if ! cmp -s $(KOUT)/.config $(KSELFTEST_KOUT)/.config.board; then \
		echo '  KCONFIG $(KSELFTEST_KOUT:$(CURDIR)/%=%)/.config (the board'"'"'s, without the series)'; \
		cp $(KOUT)/.config $(KSELFTEST_KOUT)/.config && \
		$(kmake-unpatched) -s olddefconfig && cp $(KOUT)/.config $(KSELFTEST_KOUT)/.config.board; fi
	$(quiet) '  MAKE    $(subst $(MAKE),make,$(kmake-unpatched)) $(KERNEL_TARGETS)'
	$(Q)$(kmake-unpatched) $(KERNEL_TARGETS)

kselftest: kselftest-kernel
	$(Q)$(HARNESS) kselftest --board $(BOARD_DIR) --userland $(GUEST_USERLAND)/root \
		--patched-kernel $(KERNEL_IMAGE) --patched-tree $(TREE) \
		--unpatched-kernel $(KSELFTEST_KOUT)/$(BOARD_IMAGE) --unpatched-tree $(KSELFTEST_TREE) \
		$(if $(DTB_FILE),--patched-dtb $(DTB_FILE) --unpatched-dtb $(DTB_FILE:$(KOUT)/%=$(KSELFTEST_KOUT)/%)) \
		--manifest $(FWOUT)/manifest.json --out $(KSELFTEST)/$(OUT_NAME)

# cfg80211 and the regulatory database built into the board's kernel: the
# guest (Debian's busybox and iw) must see cfg80211 take CFG80211_COUNTRY,
# which only the database holds, after it has checked the signature.
CFG80211_COUNTRY ?= DE

cfg80211: kernel dtb guest-deps
	$(Q)$(HARNESS) cfg80211 --board $(BOARD_DIR) --userland $(GUEST_USERLAND)/root \
		--kernel $(KERNEL_IMAGE) $(if $(DTB_FILE),--dtb $(DTB_FILE)) \
		--manifest $(FWOUT)/manifest.json --country $(CFG80211_COUNTRY) --out $(OUT)/cfg80211

uboot-deps:
	$(Q)$(install-deps) $(UBOOT_PACKAGES)

report-deps:
	$(Q)$(install-deps) $(REPORT_PACKAGES)

# The device tree QEMU makes for a dtb = qemu board, written once per kernel.
dtb: kernel
ifeq ($(BOARD_DTB),qemu)
	$(Q)if [ ! -f $(DTB_FILE) ] || [ $(BOARD_DIR)/board.cfg -nt $(DTB_FILE) ]; then \
		echo '  DTB     $(DTB_FILE:$(CURDIR)/%=%) (QEMU dumpdtb)'; \
		$(HARNESS) dumpdtb --board $(BOARD_DIR) --kernel $(KERNEL_IMAGE) --out $(DTB_FILE) \
			>/dev/null; fi
endif

uimage: kernel uboot-deps
	$(quiet) '  UIMAGE  $(UIMAGE:$(CURDIR)/%=%)'
	$(Q)SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) $(FWEMBED) uimage --board $(BOARD_DIR) \
		--kernel $(KERNEL_IMAGE) --out $(UIMAGE)

fit: initramfs dtb uboot-deps
	$(quiet) '  FIT     $(FIT:$(CURDIR)/%=%)'
	$(Q)SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) $(FWEMBED) fit --board $(BOARD_DIR) \
		--kernel $(KERNEL_IMAGE) $(if $(DTB_FILE),--dtb $(DTB_FILE)) --initrd $(INITRAMFS) \
		--out $(FIT) $(if $(filter 1,$(V)),,>/dev/null)
	$(Q)mkimage -l $(FIT)

uboot-disk: fit
	$(quiet) '  DISK    $(UBOOT_DISK:$(CURDIR)/%=%) (boot.scr, image.fit)'
	$(Q)SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) $(FWEMBED) uboot-disk --board $(BOARD_DIR) \
		--fit $(FIT) --out $(UBOOT_DISK) $(if $(filter 1,$(V)),,>/dev/null)

# The same kernel without firmware (CONFIG_FW_LOADER_GENERATED_DIR=""), which
# 'make report' measures vmlinux growth against. Its build directory starts
# as a copy of the board's, so that Kbuild rebuilds only what depends on
# that option; afterwards it is configured and rebuilt like any other.
NOFW_KOUT := $(OUT)/linux-nofw

nofw-kernel: kernel
	$(Q)if ! cmp -s $(TREE)/.fwembed-tree $(NOFW_KOUT)/.fwembed-tree; then \
		echo '  COPY    $(KOUT:$(CURDIR)/%=%) -> $(NOFW_KOUT:$(CURDIR)/%=%)'; \
		tmp=$$(mktemp -d '$(NOFW_KOUT).XXXXXX') && cp -a $(KOUT)/. "$$tmp" && \
		rm -f "$$tmp/.config" && rm -rf $(NOFW_KOUT) && mv "$$tmp" $(NOFW_KOUT); fi
	$(Q)$(call update-line,$(OUT)/nofw.config,CONFIG_FW_LOADER_GENERATED_DIR="")
	$(Q)$(MAKE) --no-print-directory $(if $(filter 1,$(V)),,-s) -f $(firstword $(MAKEFILE_LIST)) \
		KOUT=$(NOFW_KOUT) FW_FRAGMENT=$(OUT)/nofw.config $(NOFW_KOUT)/.config
	$(quiet) '  MAKE    $(subst $(MAKE),make,$(call kmake,$(NOFW_KOUT))) vmlinux'
	$(Q)$(call kmake,$(NOFW_KOUT)) vmlinux

report: report-deps nofw-kernel
	$(quiet) '  REPORT  $(OUT:$(CURDIR)/%=%)/report.json'
	$(Q)$(FWEMBED) report --manifest $(FWOUT:$(CURDIR)/%=%)/manifest.json \
		--vmlinux $(KOUT:$(CURDIR)/%=%)/vmlinux --base-vmlinux $(NOFW_KOUT:$(CURDIR)/%=%)/vmlinux \
		--json $(OUT:$(CURDIR)/%=%)/report.json

# Firmware that the list marks install=yes goes to the filesystem: the
# root filesystem's /lib/firmware when INSTALL_FW_PATH points there.
firmware_install:
	$(Q)$(FWEMBED) install $(FW_INPUT) --dest $(call shell-quote,$(INSTALL_FW_PATH)) \
		$(if $(filter 1,$(INSTALL_FW_ALL)),--all,--all-hint INSTALL_FW_ALL=1)

# The KUnit suite of the patch series, run by the kernel's own kunit.py.
kunit: tree
	$(Q)$(install-deps) gcc-arm-linux-gnueabi qemu-system-arm
	$(quiet) '  KUNIT   $(TREE:$(CURDIR)/%=%)/drivers/base/firmware_loader/builtin'
	$(Q)cd $(TREE) && $(PYTHON) tools/testing/kunit/kunit.py run --arch=arm \
		--cross_compile=arm-linux-gnueabi- --build_dir=$(BUILD)/kunit$(KERNEL_SUFFIX) \
		--kunitconfig=drivers/base/firmware_loader/builtin --jobs=$(JOBS) \
		--make_options NM=arm-linux-gnueabi-gcc-nm \
		$(if $(CCACHE),--make_options CC="ccache arm-linux-gnueabi-gcc" --make_options HOSTCC="$(host-cc)")

# Benchmarks (bench/bench.py runs each part, then prints one table): build
# time and memory against 6.1's routes, incremental builds, lookup, table
# overhead, dedup, compression, boot time built in against the initramfs.
# The recipe names make through BENCH_MAKE, not $(MAKE) itself, which would
# make 'make -n bench' run the bench (with every inner make a dry run).
BENCH_PARTS ?= lookup,size,build,memory,boot
BENCH_MAKE = $(MAKE)
bench: tree
	$(Q)$(install-deps) $(CHECK_PACKAGES) time xxd
	$(Q)$(PYTHON) bench/bench.py --make "$(BENCH_MAKE)" --parts $(BENCH_PARTS) --kernel $(KERNEL)

# Stress tests. The sanitizer kernel of stress/vexpress-a9 (KASAN, kmemleak,
# lockdep, debug objects, DEBUG_VM, fault injection), vexpress-a9's kernel
# otherwise, boots with stress/init.c, which runs the fw_builtin_stress test
# of patch 0016 (STRESS_THREADS kernel threads of STRESS_CYCLES cycles each)
# and its fault injection test, then a kmemleak scan; stress/kernel_stress.py
# judges the console. Then the generator is fuzzed with 10,000 Hypothesis
# examples per test.
STRESS_BOARD := $(CURDIR)/stress/vexpress-a9
STRESS_OUT := $(BUILD)/stress-vexpress-a9$(KERNEL_SUFFIX)
STRESS_KOUT := $(STRESS_OUT)/linux
STRESS_THREADS ?= 8
STRESS_CYCLES ?= 10000

stress: deps
	$(Q)$(install-deps) $(CHECK_PACKAGES)
	$(Q)$(MAKE) --no-print-directory BOARD=$(STRESS_BOARD) OUT_NAME=$(notdir $(STRESS_OUT)) \
		EXTRA_FRAGMENTS=boards/vexpress-a9/kernel.config kernel
	$(quiet) '  CC      $(STRESS_OUT:$(CURDIR)/%=%)/init'
	$(Q)arm-linux-gnueabi-gcc -static -Os -Wall -Werror -o $(STRESS_OUT)/init stress/init.c
	$(Q)sed 's|@INIT@|$(STRESS_OUT)/init|' stress/initramfs.list > $(STRESS_OUT)/initramfs.list
	$(quiet) '  CPIO    $(STRESS_OUT:$(CURDIR)/%=%)/initramfs.cpio'
	$(Q)$(STRESS_KOUT)/usr/gen_init_cpio $(STRESS_OUT)/initramfs.list > $(STRESS_OUT)/initramfs.cpio
	$(Q)$(PYTHON) stress/kernel_stress.py --board $(STRESS_BOARD) \
		--kernel $(STRESS_KOUT)/arch/arm/boot/zImage \
		--dtb $(STRESS_KOUT)/arch/arm/boot/dts/vexpress-v2p-ca9.dtb \
		--initrd $(STRESS_OUT)/initramfs.cpio --log $(STRESS_OUT)/console.log \
		--threads $(STRESS_THREADS) --cycles $(STRESS_CYCLES)
	$(Q)FWEMBED_FUZZ_EXAMPLES=10000 $(PYTHON) -m pytest stress/

# Every package is installed here, once; the tests themselves install nothing.
# The generator fuzzer (stress/) runs with FWEMBED_FUZZ_EXAMPLES examples per
# test; make stress runs it with 10,000.
FWEMBED_FUZZ_EXAMPLES ?= 50
# The kernels make check covers in full: on each, every board boots
# (tests/test_kernels.py) and tests/test_series.py applies the series and
# builds it patch by patch, and runs KUnit. The others are covered by virt64
# booting on them, and by checkpatch and git am (tests/test_patches.py).
# Both kernels in full took 43m53s in CI's cold run at cdb3123 and 43m02s
# here at 0ebb94b with ccache warm (docs/testing.md), inside the 45 minutes;
# 6.1 alone took 31m28s at fdd28ef (CI's cold run of it, at 7c58dd8, 31m47s).
# make check CHECK_KERNELS=6.1 covers 6.1 alone.
CHECK_KERNELS ?= 6.1 6.12

# make check runs its tests on this many pytest-xdist workers. Two keep both
# of CI's cores busy: a QEMU boot uses one, and one worker's build can use the
# other. Tests that share a build folder run on one worker (tests/conftest.py).
# Three took longer: both kernels in 50m01s at dfd6d23, where two had taken
# 46m26s at ef92741, whose builds were the same (docs/testing.md).
CHECK_WORKERS ?= 2

# Every board folder's packages, as fwembed's board.cfg parser reads them.
every-board-packages = $$(for b in boards/*/; do $(FWEMBED) board $$b | sed -n 's/^packages = //p'; done)

# One install-deps call, so that a fresh machine runs apt-get update once; it
# adds the architecture of the guests' user space (GUEST_ARCH).
check:
	$(Q)$(install-deps) --arch $(GUEST_ARCH) $(BUILD_PACKAGES) $(CHECK_PACKAGES) $(every-board-packages) \
		$(if $(KERNEL_SRC),,$(addprefix linux-source-,$(KERNELS)))
	$(Q)$(fetch-guest-debs)
	$(Q)FWEMBED_CHECK_KERNELS='$(CHECK_KERNELS)' \
		FWEMBED_FUZZ_EXAMPLES=$(FWEMBED_FUZZ_EXAMPLES) $(PYTHON) -m pytest -n $(CHECK_WORKERS) --dist loadgroup

test-quick:
	$(Q)$(install-deps) $(QUICK_PACKAGES)
	$(Q)FWEMBED_FUZZ_EXAMPLES=$(FWEMBED_FUZZ_EXAMPLES) $(PYTHON) -m pytest -m "not kernel"

clean:
	rm -rf $(OUT)

distclean:
	rm -rf $(BUILD)
