"""Each kernel's series applies with git am to a clean tree, and each patch builds.

Every test runs once per kernel (6.1, and 6.12 with its own series). A
clean tree is extracted from Debian's tarball into build/series/ (for 6.12,
build/series-6.12/), committed,
and the patches are applied one at a time with git am. vmlinux is built
first from the whole series with the x86_64 board's own configuration
(ccache's objects of the board's build), then each patch's commit is checked
out in turn. After each one that
changes a file the build reads (not the documentation or the selftests),
vmlinux is built for x86_64, configured again where a Kconfig file or the
firmware fragment changed: the x86_64 board's allnoconfig-based
configuration, where the loader is built in, with every
option the series adds (KUnit tests, lookup bench, stress file) and an
in-tree CONFIG_EXTRA_FIRMWARE file beside a generated table. x86 is where
most CONFIG_EXTRA_FIRMWARE users are, and its small configuration keeps
seventeen patches cheap to build; the boards' tests boot the series on ARM. The final
kernel, booted in QEMU, shows that both kinds of built-in firmware load
side by side. Last, x86_64 tinyconfig builds the loader's directory with the
loader built in, as a module, and left out.
"""

import dataclasses
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import time

import pytest

from conftest import (CHECK_KERNELS, DEFAULT_KERNEL, FWEMBED, HARNESS, PYTHON, ROOT, build_group,
                      make)
from fwembedlib.board import load_board
from fwharness.qemu import qemu_command
from test_patches import paths_in_series, series

BOARD_DIR = ROOT / "boards" / "x86_64"
BOARD = load_board(BOARD_DIR)
INTREE_NAME = "fwembed-intree.bin"
INTREE_DATA = bytes(range(255, -1, -1)) * 3
# Every option the series adds. The boots leave out the KUnit suite, whose
# entries would join the table, but keep KUnit itself, as the board's own
# configuration does: CONFIG_KUNIT changes struct task_struct, and a
# configuration without it would share no object with the board's build.
# Before the patch that adds an option, Kconfig drops it.
BOOT_OPTIONS = ("CONFIG_KUNIT=y\n"
                "CONFIG_FW_LOADER_BUILTIN_BENCH=y\n"
                "CONFIG_FW_LOADER_BUILTIN_STRESS=y\n")
EVERY_OPTION = BOOT_OPTIONS + "CONFIG_FW_LOADER_BUILTIN_KUNIT_TEST=y\n"


@dataclasses.dataclass
class SeriesRun:
    """One kernel's series, applied and built: where, and what happened."""
    kernel: str
    applied: list = dataclasses.field(default_factory=list)
    builds: dict = dataclasses.field(default_factory=dict)
    boot: subprocess.CompletedProcess = None

    @property
    def dir(self):
        """build/series for the default kernel, build/series-VERSION for another."""
        suffix = "" if self.kernel == DEFAULT_KERNEL else f"-{self.kernel}"
        return ROOT / "build" / f"series{suffix}"

    @property
    def tree(self):
        return self.dir / f"linux-{self.kernel}"

    @property
    def out(self):
        """As deep below the series folder as the board's own build is below
        build/, so that ccache sees the same relative paths and reuses the
        board's objects."""
        suffix = "" if self.kernel == DEFAULT_KERNEL else f"-{self.kernel}"
        return self.dir / f"x86_64{suffix}" / "linux"

    @property
    def image(self):
        return self.out / BOARD.settings["image"]

    @property
    def kunit_image(self):
        return self.dir / "bzImage-kunit"

    @property
    def extra(self):
        return self.dir / "extra"


# Each command this module runs, with the seconds it took: where
# test_series' minutes go.
TIMES_LOG = ROOT / "build" / "series-times.log"


def sh(cmd, cwd, **kw):
    start = time.monotonic()
    result = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False, **kw)
    with open(TIMES_LOG, "a", encoding="utf-8") as log:
        log.write(f"{time.monotonic() - start:8.2f} s  {shlex.join(map(str, cmd))}\n")
    return result


# What kmake() writes to make's standard input: an empty line for each
# prompt of the syncconfig that Kbuild runs when .config is newer than its
# own copy, so that every option the merged .config lacks takes its default,
# as `yes "" | make oldconfig` does (more lines than Kconfig has symbols).
KCONFIG_ANSWERS = "\n" * 65536


def kmake(tree, out, *targets):
    cross = BOARD.settings["cross_compile"]
    tools = []
    if shutil.which("ccache"):
        # As the Makefile does, so that a cold run compiles most objects once.
        tools = [f"CC=ccache {cross}gcc", "HOSTCC=ccache gcc",
                 f"KCPPFLAGS=-fmacro-prefix-map={os.path.relpath(tree, out)}/="]
    if shutil.which(f"{cross}gcc-nm"):
        tools.append(f"NM={cross}gcc-nm")  # as the Makefile does: nm without LLVM's plugin
    env = dict(os.environ, CCACHE_BASEDIR=str(ROOT), KBUILD_BUILD_TIMESTAMP="fwembed",
               KBUILD_BUILD_USER="fwembed", KBUILD_BUILD_HOST="fwembed")
    env.pop("MAKEFLAGS", None)
    arch = BOARD.settings["arch"]
    return sh(["make", "-C", tree, f"O={out}", f"ARCH={arch}", f"CROSS_COMPILE={cross}",
               *tools, f"-j{os.cpu_count() or 2}", *targets], cwd=tree, env=env,
              input=KCONFIG_ANSWERS)


# The .config that each defconfig target (allnoconfig, tinyconfig) wrote, by
# tree, commit and target: in one run it depends on nothing else, and the tests
# configure the final tree of each series eight times from those two.
# allnoconfig costs 10 to 14 s here, tinyconfig (three Kconfig passes) 27.
DEFCONFIGS = {}


def merge_config(tree, out, defconfig, fragments, own):
    """``defconfig``, then the fragment files ``fragments`` and the text ``own``
    (written beside ``out``), merged into its .config. The next build in
    ``out`` completes it: Kbuild finds .config newer than its own copy and
    runs syncconfig, which, with kmake()'s empty answers, writes the
    .config that olddefconfig would (the same file, byte for byte, for the
    x86_64 board on 6.12 with 153 options new to the merged file). An
    olddefconfig here would make that a second Kconfig run before each build,
    5 to 6 s idle. The defconfig target runs once per commit of the tree;
    later calls start from the .config it wrote."""
    out.mkdir(parents=True, exist_ok=True)
    head = sh(["git", "rev-parse", "HEAD"], tree).stdout.strip()
    key = (str(tree), head, defconfig)
    if key in DEFCONFIGS:
        (out / ".config").write_text(DEFCONFIGS[key])
    else:
        result = kmake(tree, out, defconfig)
        assert result.returncode == 0, result.stderr
        DEFCONFIGS[key] = (out / ".config").read_text()
    own_file = out.parent / f"{out.name}.config"
    own_file.write_text(own)
    fragment_args = [arg for f in [*fragments, own_file] for arg in ("--fragment", f)]
    merged = sh([PYTHON, FWEMBED, "config", "--merge", *fragment_args,
                 "--config", out / ".config"], ROOT)
    assert merged.returncode == 0, merged.stderr


def board_fragments(kernel):
    """The board's fragments for ``kernel``, as make merges them: kernel.config,
    then kernel-VERSION.config if the board has one."""
    return [BOARD_DIR / "kernel.config",
            *[f for f in [BOARD_DIR / f"kernel-{kernel}.config"] if f.exists()]]


def configure(run, fragment, options=BOOT_OPTIONS):
    """The board's defconfig and fragments for the run's kernel, then
    ``fragment`` and ``options``: the board's own configuration but for
    them, so that ccache serves the objects they do not change from the
    board's build."""
    merge_config(run.tree, run.out, BOARD.settings["defconfig"], board_fragments(run.kernel),
                 fragment + options)


# Where the x86_64 board's CONFIG_EXTRA_FIRMWARE_DIR, relative to the source
# tree, leads from a series tree: build/series*/linux-*/../../boards.
BOARDS_LINK = ROOT / "build" / "boards"


def build_as_the_board(run):
    """Build vmlinux from the whole series with the x86_64 board's own
    configuration, as make configures it (its fragments, then
    CONFIG_FW_LOADER_GENERATED_DIR="../fw"), before the patch by patch
    builds. The series' build folder lies as deep below its folder as the
    board's does below build/, so the compiler's command lines are the same
    once ccache has made their paths relative (CCACHE_BASEDIR), and with the
    same configuration ccache finds the board's objects in its direct mode,
    all but the few that hold the version string or a firmware file's path.
    The first patch's build, after this one, compiles what the series or
    its configuration changes. Built first, it found no other build of its
    configuration and ccache ran the preprocessor on every file: 229.07 s
    for 6.12 here, the host otherwise idle, against 126.30 s for this build
    and 18.00 s for the first patch's after it. This build only fills the
    folder: if it fails, the folder is emptied and the patches are built
    from nothing."""
    try:
        BOARDS_LINK.symlink_to("../boards")
    except FileExistsError:
        pass
    assert BOARDS_LINK.resolve() == (ROOT / "boards").resolve(), f"{BOARDS_LINK} is not ours"
    gen = sh([PYTHON, FWEMBED, "gen", "-q", "--list", BOARD_DIR / "firmware.list",
              "--out", run.out.parent / "fw"], ROOT)
    assert gen.returncode == 0, gen.stderr
    merge_config(run.tree, run.out, BOARD.settings["defconfig"], board_fragments(run.kernel),
                 'CONFIG_FW_LOADER_GENERATED_DIR="../fw"\n')
    if kmake(run.tree, run.out, "vmlinux").returncode != 0:
        shutil.rmtree(run.out)


def remove_objects_of_missing_sources(run, added):
    """Remove from the build folder the object, and its .cmd file, of each
    source in ``added`` (files that some patch adds) that the checked-out
    commit does not have. Kbuild would otherwise keep the object that the
    final tree's build left, since the .cmd file gives it a rule without
    the source, and link it: a patch whose Makefile names a file that only
    a later patch adds would build."""
    for path in added:
        stem, dot, suffix = path.rpartition(".")
        if dot and suffix in ("c", "S") and not (run.tree / path).exists():
            folder, _, name = stem.rpartition("/")
            for built in (f"{name}.o", f".{name}.o.cmd"):
                (run.out / folder / built).unlink(missing_ok=True)


def firmware_fragment(run, fwdir):
    """The in-tree CONFIG_EXTRA_FIRMWARE file beside the generated table in fwdir."""
    return (f'CONFIG_EXTRA_FIRMWARE="{INTREE_NAME}"\n'
            f'CONFIG_EXTRA_FIRMWARE_DIR="{run.extra}"\n'
            f'CONFIG_FW_LOADER_GENERATED_DIR="{fwdir}"\n')


def boot(run, manifest, log, *args):
    """Boot the x86_64 kernel of ``run``, with no initramfs, and check it."""
    return sh([PYTHON, HARNESS, "boot", "--board", BOARD_DIR, "--kernel", run.image,
               "--manifest", manifest, "--log", log, *args], ROOT)


def read_by_the_build(path):
    """Whether building vmlinux reads the file at ``path`` (relative to the
    tree): documentation, MAINTAINERS and the selftests it does not. A patch
    that changes only those is not built again."""
    return not (path.startswith(("Documentation/", "tools/testing/")) or path == "MAINTAINERS")


def is_kconfig(path):
    """Whether ``path`` is a Kconfig file: a patch that changes none leaves
    the configuration as the previous patch had it."""
    return path.rpartition("/")[2].startswith("Kconfig")


# In the x86_64 board's group, after its build, whose objects ccache serves.
@pytest.fixture(scope="module", params=[pytest.param(k, marks=build_group("x86_64", k), id=k)
                                        for k in CHECK_KERNELS])
def series_run(request):
    run = SeriesRun(kernel=request.param)
    TIMES_LOG.parent.mkdir(exist_ok=True)
    if run.kernel == CHECK_KERNELS[0]:
        TIMES_LOG.unlink(missing_ok=True)  # a log of this run's commands only
    assert make("deps", f"KERNEL={run.kernel}").returncode == 0
    shutil.rmtree(run.dir, ignore_errors=True)
    tree, out = run.tree, run.out
    tree.mkdir(parents=True)
    extracted = sh(["tar", "-C", tree, "--strip-components=1", "-xf",
                    f"/usr/src/linux-source-{run.kernel}.tar.xz"], ROOT)
    assert extracted.returncode == 0, extracted.stderr
    git = ["git", "-c", "user.name=fwembed test", "-c", "user.email=test@fwembed.invalid"]
    # The base commit holds only Debian's files that the series changes:
    # git am and git checkout then read an index of 10 to 18 files, not of
    # the tree's 80,000, and git applies the same patches to the same
    # files; the rest of the tree stays beside them, untracked.
    base_files = [path for path in paths_in_series(run.kernel) if (tree / path).exists()]
    for cmd in (["git", "init", "-q"], ["git", "add", "-f", "--", *base_files],
                git + ["commit", "-q", "-m", "base"], ["git", "tag", "base"]):
        assert sh(cmd, tree).returncode == 0, cmd

    extra = run.extra
    extra.mkdir()
    (extra / INTREE_NAME).write_bytes(INTREE_DATA)
    # The versatile list, and for the patches before the kernel has an
    # init-only table, the same list without its lifetime=init entries.
    versatile = ROOT / "boards/versatile/firmware.list"
    plain_list = run.dir / "plain.list"
    plain_list.write_text("".join(
        line.replace("../../firmware/", f"{ROOT}/firmware/")
        for line in versatile.read_text().splitlines(True) if "lifetime=init" not in line))
    fwdir, plain = run.dir / "fw", run.dir / "fw-plain"
    for source, generated in ((versatile, fwdir), (plain_list, plain)):
        gen = sh([PYTHON, FWEMBED, "gen", "-q", "--list", source, "--out", generated], ROOT)
        assert gen.returncode == 0, gen.stderr

    # git am applies the whole series first; then each patch's commit is
    # checked out in turn and built in the folder that the final tree's
    # build filled. Checking out rewrites the files that differ, so make
    # sees them as new; the objects of files that only later patches add
    # are removed.
    for patch in series(run.kernel):
        applied = sh(git + ["am", "-q", patch], tree)
        if applied.returncode != 0:
            run.builds[patch.name] = applied
            aborted = sh(["git", "am", "--abort"], tree)
            assert aborted.returncode == 0, applied.stderr + aborted.stderr
            break
        run.applied.append(patch.name)
    commits = sh(["git", "rev-list", "--reverse", "base..HEAD"], tree).stdout.split()
    branch = sh(["git", "symbolic-ref", "--short", "HEAD"], tree).stdout.strip()
    complete = len(run.applied) == len(series(run.kernel))
    if complete:
        build_as_the_board(run)

    added = sh(["git", "diff", "--name-only", "--no-renames", "--diff-filter=A", "base", "HEAD"],
               tree).stdout.split()
    configured = None
    for index, (name, commit) in enumerate(zip(run.applied, commits)):
        checkout = sh(["git", "checkout", "-q", commit], tree)
        assert checkout.returncode == 0, checkout.stderr
        remove_objects_of_missing_sources(run, added)
        changed = sh(["git", "diff", "--name-only", "HEAD~1", "HEAD"], tree).stdout.split()
        if index > 0 and not any(map(read_by_the_build, changed)):
            # The tree vmlinux is built from is the previous patch's.
            run.builds[name] = run.builds[run.applied[index - 1]]
            continue
        header = tree / "include/linux/builtin_fw.h"
        init_only = header.exists() and "builtin_fw_init_entry" in header.read_text()
        fragment = firmware_fragment(run, fwdir if init_only else plain)
        if fragment != configured or any(map(is_kconfig, changed)):
            configure(run, fragment, EVERY_OPTION)
            configured = fragment
        run.builds[name] = kmake(tree, out, "vmlinux")
    checkout = sh(["git", "checkout", "-q", branch], tree)
    assert checkout.returncode == 0, checkout.stderr
    if complete:
        # The last build has every option, the KUnit suite among them: keep
        # a bootable image of it for test_kunit_suite_passes_at_boot.
        images = kmake(tree, out, "bzImage")
        assert images.returncode == 0, images.stderr[-3000:]
        shutil.copyfile(run.image, run.kunit_image)
        configure(run, firmware_fragment(run, fwdir))
        images = kmake(tree, out, "bzImage")
        assert images.returncode == 0, images.stderr[-3000:]
        run.boot = boot(run, fwdir / "manifest.json", run.dir / "console.log",
                        "--kernel-config", out / ".config", "--kernel-tree", tree)
    return run


@pytest.mark.kernel
def test_series_applies_with_git_am(series_run):
    """git am applies every patch to a clean tree, one commit each."""
    assert series_run.applied == [p.name for p in series(series_run.kernel)]
    log = sh(["git", "log", "--format=%s", "base..HEAD"], series_run.tree).stdout
    assert len(log.splitlines()) == len(series(series_run.kernel))


@pytest.mark.kernel
@pytest.mark.parametrize("index", range(len(series())), ids=lambda i: series()[i].name[:4])
def test_each_patch_builds(series_run, index):
    """vmlinux builds with the series applied up to and including this patch
    (for a patch that changes no file the build reads, the same build as
    the patch before it)."""
    name = series(series_run.kernel)[index].name
    result = series_run.builds[name]
    assert result.returncode == 0, result.stderr[-3000:]


@pytest.mark.kernel
def test_generated_and_intree_firmware_load_side_by_side(series_run):
    """The final kernel delivers every generated entry and the EXTRA_FIRMWARE one."""
    assert series_run.boot is not None
    assert series_run.boot.returncode == 0, series_run.boot.stdout + series_run.boot.stderr
    digest = hashlib.sha256(INTREE_DATA).hexdigest()
    console = (series_run.dir / "console.log").read_text()
    assert f'# size={len(INTREE_DATA)} sha256={digest} name="{INTREE_NAME}"' in console
    assert f"  PASS  {len(INTREE_DATA):>9} B  {digest[:12]}  {INTREE_NAME}" in \
        series_run.boot.stdout


@pytest.mark.kernel
def test_kunit_suite_passes_at_boot(series_run):
    """The series' KUnit suite, built into the kernel with every option, runs at
    boot in QEMU; the kernel's own kunit.py reads the console, and every case
    of the suite passes. (make kunit runs the same suite on ARM, in the kernel
    kunit.py builds.)"""
    assert series_run.boot is not None
    log = series_run.dir / "console-kunit.log"
    command = qemu_command(BOARD, series_run.kunit_image, None)
    with open(log, "w", encoding="utf-8") as out:
        subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, timeout=600, check=False)
    # The boot self-test prints a KTAP document of its own first; kunit.py
    # reads the one KUnit prints, which starts at the top-level KTAP line
    # before its first subtest.
    lines = log.read_text(errors="replace").splitlines(keepends=True)
    first_suite = next(i for i, line in enumerate(lines) if "# Subtest: firmware_loader_" in line)
    start = max(i for i in range(first_suite) if lines[i].rstrip() == "KTAP version 1")
    ktap = series_run.dir / "console-kunit.ktap"
    ktap.write_text("".join(lines[start:]))
    parsed = sh([PYTHON, "tools/testing/kunit/kunit.py", "parse", ktap], series_run.tree)
    output = parsed.stdout + parsed.stderr
    assert parsed.returncode == 0, output[-4000:]
    source = series_run.tree / "drivers/base/firmware_loader/builtin/builtin_kunit.c"
    cases = re.findall(r"^\s*KUNIT_CASE\((\w+)\)", source.read_text(), re.M)
    assert len(cases) >= 10
    for case in cases:
        assert re.search(rf"\[PASSED\] {case}\b", output), f"{case} did not pass"
    summary = re.search(r"Testing complete\. Ran (\d+) tests: passed: (\d+)", output)
    assert summary and summary.group(1) == summary.group(2) == str(len(cases)), output[-2000:]


@pytest.mark.kernel
def test_name_in_both_tables_is_a_build_error(series_run, tmp_path):
    """A CONFIG_EXTRA_FIRMWARE name that the generated table also has stops the build."""
    extra = tmp_path / "extra"
    (extra / "fwembed").mkdir(parents=True)
    (extra / "fwembed" / "seven.bin").write_bytes(b"clash")
    out = series_run.out
    config = (out / ".config").read_text()
    try:
        (out / ".config").write_text(
            config.replace(f'CONFIG_EXTRA_FIRMWARE="{INTREE_NAME}"',
                           'CONFIG_EXTRA_FIRMWARE="fwembed/seven.bin"')
            .replace(f'CONFIG_EXTRA_FIRMWARE_DIR="{series_run.extra}"',
                     f'CONFIG_EXTRA_FIRMWARE_DIR="{extra}"'))
        result = kmake(series_run.tree, out, "vmlinux")
        assert result.returncode != 0
        assert "CONFIG_EXTRA_FIRMWARE: fwembed/seven.bin also in" in result.stderr
    finally:
        (out / ".config").write_text(config)


@pytest.mark.kernel
def test_patched_kernel_without_any_firmware_boots(series_run, tmp_path):
    """With no generated directory and no EXTRA_FIRMWARE, the kernel builds and boots.
    This is the build that every x86 kernel with the loader built in makes."""
    out = series_run.out
    configure(series_run, 'CONFIG_EXTRA_FIRMWARE=""\n')
    images = kmake(series_run.tree, out, "bzImage")
    assert images.returncode == 0, images.stderr[-3000:]
    config = (out / ".config").read_text()
    assert 'CONFIG_FW_LOADER_GENERATED_DIR=""' in config
    assert 'CONFIG_EXTRA_FIRMWARE=""' in config
    manifest = tmp_path / "manifest.json"
    manifest.write_text('{"fwembed_manifest": 1, "entries": []}\n')
    result = boot(series_run, manifest, series_run.dir / "console-empty.log")
    assert result.returncode == 0, result.stdout + result.stderr
    console = (series_run.dir / "console-empty.log").read_text()
    assert "# fw_builtin_selftest: 0 built-in entries" in console
    assert "ok 1 partial_reads # SKIP no non-empty entry" in console
    assert "ok 3 into_buf_too_small_fails # SKIP no non-empty entry" in console


OUT_OF_ORDER_NAME = "zzz-out-of-order.bin"
OUT_OF_ORDER_DATA = b"out of order\n"
# An entry emitted by hand into a section that sorts first, although its
# name sorts last: a table that the linker cannot have sorted. Bisection
# would never find it; the linear fallback must.
OUT_OF_ORDER_S = f"""\
	.section .rodata, "a"
.Lname:	.asciz "{OUT_OF_ORDER_NAME}"
	.section .builtin_fw_data, "a"
.Ldata:	.ascii "out of order\\n"
.Lend:
	.section ".builtin_fw.!", "a"
	.balign 8
	.dc.a .Lname, .Ldata, .Lend - .Ldata, .Lend - .Ldata, 0, 0
"""


# An entry whose data lies in .rodata, outside the section that tells
# release_firmware() not to free it: the kernel must refuse it.
MISPLACED_NAME = "misplaced-data.bin"
MISPLACED_S = f"""\
	.section .rodata, "a"
.Lname:	.asciz "{MISPLACED_NAME}"
.Ldata:	.ascii "misplaced\\n"
.Lend:
	.section ".builtin_fw.{MISPLACED_NAME}", "a"
	.balign 8
	.dc.a .Lname, .Ldata, .Lend - .Ldata, .Lend - .Ldata, 0, 0
"""


def boot_with_extra_object(series_run, tmp_path, name, source, entry):
    """Boot the final kernel with the sample table plus one hand-made object,
    which adds the entry called ``entry``."""
    fwdir = tmp_path / "fw"
    shutil.copytree(series_run.dir / "fw", fwdir)
    (fwdir / f"{name}.S").write_text(source)
    with open(fwdir / "objects.mk", "a", encoding="utf-8") as objects:
        objects.write(f"builtin-fw-objs += {name}.o\n")
    out = series_run.out
    configure(series_run, firmware_fragment(series_run, fwdir))
    images = kmake(series_run.tree, out, "bzImage")
    assert images.returncode == 0, images.stderr[-3000:]
    log = series_run.dir / f"console-{name}.log"
    result = boot(series_run, fwdir / "manifest.json", log, "--kernel-config", out / ".config",
                  "--kernel-tree", series_run.tree, "--extra-firmware", entry)
    return result, log.read_text()


@pytest.mark.kernel
def test_entry_with_data_outside_its_section_is_refused(series_run, tmp_path):
    """Data the kernel would not know as built in is refused with a warning,
    never handed out (release_firmware() would vfree() it)."""
    result, console = boot_with_extra_object(series_run, tmp_path, "misplaced", MISPLACED_S,
                                             MISPLACED_NAME)
    assert result.returncode != 0
    assert f"built-in firmware {MISPLACED_NAME}: data outside the section of its table, " \
        "ignored" in console
    assert f'# error=-2 name="{MISPLACED_NAME}"' in console
    # Only it fails: its own request, and its partial read.
    assert re.search(r"^# partial: raw=\d+ compressed=\d+ init=\d+ failed=1$", console, re.M)
    assert re.search(r"^# fw_builtin_selftest: pass:\d+ fail:2 ", console, re.M)


@pytest.mark.kernel
def test_unsorted_table_warns_once_and_every_entry_still_loads(series_run, tmp_path):
    """A table out of order gets one boot warning; lookup falls back and finds every entry."""
    result, console = boot_with_extra_object(series_run, tmp_path, "out-of-order",
                                             OUT_OF_ORDER_S, OUT_OF_ORDER_NAME)
    assert result.returncode == 0, result.stdout + result.stderr
    assert console.count("built-in firmware table is not sorted") == 1
    digest = hashlib.sha256(OUT_OF_ORDER_DATA).hexdigest()
    assert f'# size={len(OUT_OF_ORDER_DATA)} sha256={digest} name="{OUT_OF_ORDER_NAME}"' \
        in console


# tinyconfig with the loader built in (with and without CONFIG_EXTRA_FIRMWARE
# and every option of the series), as a module, and left out. Only the
# loader's directory is built: it holds every object the series changes, and
# the directory build takes seconds where a whole tinyconfig kernel takes
# minutes. Each variant has a build directory of its own, so that every
# object is compiled afresh. builtin/main.o is compiled in every case, as
# Kbuild always links it; that is where x86 once failed to build.
TINY_VARIANTS = {
    "y": ("CONFIG_FW_LOADER=y\n", ["CC      drivers/base/firmware_loader/main.o"],
          ["decompress.o"]),
    "y-every-option": (
        "CONFIG_FW_LOADER=y\nCONFIG_FW_LOADER_BUILTIN_XZ=y\nCONFIG_FW_LOADER_BUILTIN_ZSTD=y\n"
        "CONFIG_CRYPTO=y\nCONFIG_CRYPTO_SHA256=y\nCONFIG_FW_LOADER_BUILTIN_VERIFY=y\nCONFIG_DEBUG_FS=y\n"
        "CONFIG_FW_LOADER_BUILTIN_DEBUGFS=y\nCONFIG_FW_LOADER_BUILTIN_SELFTEST=y\n"
        f'CONFIG_EXTRA_FIRMWARE="{INTREE_NAME}"\nCONFIG_EXTRA_FIRMWARE_DIR="@SERIES@/extra"\n'
        'CONFIG_FW_LOADER_GENERATED_DIR="@SERIES@/fw"\n',
        ["CC      drivers/base/firmware_loader/builtin/decompress.o",
         "CC      drivers/base/firmware_loader/builtin/selftest.o",
         f"AS      drivers/base/firmware_loader/builtin/{INTREE_NAME}.gen.o",
         "AS      drivers/base/firmware_loader/builtin/generated/table.o"], []),
    "m": ("CONFIG_MODULES=y\nCONFIG_FW_LOADER=m\n",
          ["CC [M]  drivers/base/firmware_loader/main.o"], ["decompress.o"]),
    "n": ("# CONFIG_FW_LOADER is not set\n", [], ["drivers/base/firmware_loader/main.o"]),
}


@pytest.mark.kernel
@pytest.mark.parametrize("variant", TINY_VARIANTS)
def test_tinyconfig_builds_the_loader(series_run, variant):
    """x86_64 tinyconfig builds the loader's directory with it =y, =m and =n."""
    fragment, built, not_built = TINY_VARIANTS[variant]
    fragment = fragment.replace("@SERIES@", str(series_run.dir))
    out = series_run.dir / "tiny" / variant
    merge_config(series_run.tree, out, "tinyconfig", [], fragment)
    result = kmake(series_run.tree, out, "drivers/base/firmware_loader/")
    config = (out / ".config").read_text().splitlines()
    for line in fragment.splitlines():
        assert line in config, f"Kconfig dropped {line}"
    assert result.returncode == 0, result.stderr[-3000:]
    assert "CC      drivers/base/firmware_loader/builtin/main.o" in result.stdout
    for line in built:
        assert line in result.stdout
    for name in not_built:
        assert name not in result.stdout
