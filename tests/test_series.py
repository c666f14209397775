"""The series applies with git am to a clean 6.1 tree, and each patch builds.

A clean tree is extracted from Debian's tarball into build/series/, committed,
and the patches are applied one at a time with git am. After each one the
versatile kernel is configured and vmlinux is built. The configuration asks
for an in-tree CONFIG_EXTRA_FIRMWARE file as well as a generated table, so
the final kernel, booted in QEMU, shows that both kinds load side by side.
"""

import dataclasses
import hashlib
import os
import pathlib
import re
import shutil
import subprocess

import pytest

from conftest import FWEMBED, HARNESS, PYTHON, ROOT, make
from test_patches import series

SERIES = ROOT / "build" / "series"
TARBALL = "/usr/src/linux-source-6.1.tar.xz"
INTREE_NAME = "fwembed-intree.bin"
INTREE_DATA = bytes(range(255, -1, -1)) * 3
# The sample list has xz and zstd entries. Before the decoding patch the
# options do not exist yet and olddefconfig drops them; the tables still
# build, since only requests decode.
DECODERS = ("CONFIG_FW_LOADER_BUILTIN_XZ=y\n"
            "CONFIG_FW_LOADER_BUILTIN_ZSTD=y\n"
            "CONFIG_FW_LOADER_BUILTIN_VERIFY=y\n")


@dataclasses.dataclass
class SeriesRun:
    tree: pathlib.Path
    applied: list
    builds: dict
    boot: subprocess.CompletedProcess = None


def sh(cmd, cwd, **kw):
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False, **kw)


def kmake(tree, out, *targets):
    cross = "arm-linux-gnueabi-"
    ccache = []
    if shutil.which("ccache"):
        # As the Makefile does: the same command lines as the board's build
        # (build/series/versatile/linux sits as deep as build/versatile/linux),
        # so a cold run compiles most objects once, not twice.
        ccache = [f"CC=ccache {cross}gcc",
                  f"KCPPFLAGS=-fmacro-prefix-map={os.path.relpath(tree, out)}/="]
    env = dict(os.environ, CCACHE_BASEDIR=str(ROOT), KBUILD_BUILD_TIMESTAMP="fwembed",
               KBUILD_BUILD_USER="fwembed", KBUILD_BUILD_HOST="fwembed")
    env.pop("MAKEFLAGS", None)
    return sh(["make", "-C", tree, f"O={out}", "ARCH=arm", f"CROSS_COMPILE={cross}",
               *ccache, f"-j{os.cpu_count() or 2}", *targets], cwd=tree, env=env)


def configure(tree, out, fragment):
    for step in (["versatile_defconfig"], None, ["olddefconfig"]):
        if step is None:
            with open(out / ".config", "a", encoding="utf-8") as cfg:
                cfg.write(fragment)
            continue
        result = kmake(tree, out, *step)
        assert result.returncode == 0, result.stderr


@pytest.fixture(scope="module")
def series_run():
    assert make("deps").returncode == 0
    shutil.rmtree(SERIES, ignore_errors=True)
    tree = SERIES / "linux-6.1"
    tree.mkdir(parents=True)
    subprocess.run(["tar", "-C", tree, "--strip-components=1", "-xf", TARBALL], check=True)
    git = ["git", "-c", "user.name=fwembed test", "-c", "user.email=test@fwembed.invalid"]
    for cmd in (["git", "init", "-q"], ["git", "add", "-f", "-A"],
                git + ["commit", "-q", "-m", "base"], ["git", "tag", "base"]):
        assert sh(cmd, tree).returncode == 0, cmd

    extra = SERIES / "extra"
    extra.mkdir()
    (extra / INTREE_NAME).write_bytes(INTREE_DATA)
    fwdir = SERIES / "fw"
    gen = sh([PYTHON, FWEMBED, "gen", "-q", "--list", ROOT / "boards/versatile/firmware.list",
              "--out", fwdir], ROOT)
    assert gen.returncode == 0, gen.stderr
    fragment = (f'CONFIG_EXTRA_FIRMWARE="{INTREE_NAME}"\n'
                f'CONFIG_EXTRA_FIRMWARE_DIR="{extra}"\n'
                f'CONFIG_FW_LOADER_GENERATED_DIR="{fwdir}"\n'
                "CONFIG_FW_LOADER_BUILTIN_SELFTEST=y\n"
                "# CONFIG_FW_LOADER_USER_HELPER is not set\n" + DECODERS)

    out = SERIES / "versatile" / "linux"
    out.mkdir(parents=True)
    run = SeriesRun(tree=tree, applied=[], builds={})
    for patch in series():
        applied = sh(git + ["am", "-q", patch], tree)
        if applied.returncode != 0:
            run.builds[patch.name] = applied
            break
        run.applied.append(patch.name)
        configure(tree, out, fragment)
        run.builds[patch.name] = kmake(tree, out, "vmlinux")
    else:
        images = kmake(tree, out, "zImage", "versatile-pb.dtb")
        assert images.returncode == 0, images.stderr[-3000:]
        run.boot = sh([PYTHON, HARNESS, "boot", "--board", ROOT / "boards/versatile",
                       "--kernel", out / "arch/arm/boot/zImage",
                       "--dtb", out / "arch/arm/boot/dts/versatile-pb.dtb",
                       "--manifest", fwdir / "manifest.json",
                       "--extra-firmware", INTREE_NAME,
                       "--log", SERIES / "console.log"], ROOT)
    return run


@pytest.mark.kernel
def test_series_applies_with_git_am(series_run):
    """git am applies every patch to a clean tree, one commit each."""
    assert series_run.applied == [p.name for p in series()]
    log = sh(["git", "log", "--format=%s", "base..HEAD"], series_run.tree).stdout
    assert len(log.splitlines()) == len(series())


@pytest.mark.kernel
@pytest.mark.parametrize("index", range(len(series())), ids=lambda i: series()[i].name[:4])
def test_each_patch_builds(series_run, index):
    """vmlinux builds with the series applied up to and including this patch."""
    name = series()[index].name
    result = series_run.builds[name]
    assert result.returncode == 0, result.stderr[-3000:]


@pytest.mark.kernel
def test_generated_and_intree_firmware_load_side_by_side(series_run):
    """The final kernel delivers every generated entry and the EXTRA_FIRMWARE one."""
    assert series_run.boot is not None
    assert series_run.boot.returncode == 0, series_run.boot.stdout + series_run.boot.stderr
    digest = hashlib.sha256(INTREE_DATA).hexdigest()
    console = (SERIES / "console.log").read_text()
    assert f'# size={len(INTREE_DATA)} sha256={digest} name="{INTREE_NAME}"' in console
    assert f"  PASS  {len(INTREE_DATA):>9} B  {digest[:12]}  {INTREE_NAME}" in \
        series_run.boot.stdout


@pytest.mark.kernel
def test_name_in_both_tables_is_a_build_error(series_run, tmp_path):
    """A CONFIG_EXTRA_FIRMWARE name that the generated table also has stops the build."""
    out = SERIES / "versatile" / "linux"
    extra = tmp_path / "extra"
    (extra / "fwembed").mkdir(parents=True)
    (extra / "fwembed" / "seven.bin").write_bytes(b"clash")
    config = (out / ".config").read_text()
    try:
        (out / ".config").write_text(
            config.replace(f'CONFIG_EXTRA_FIRMWARE="{INTREE_NAME}"',
                           'CONFIG_EXTRA_FIRMWARE="fwembed/seven.bin"')
            .replace(f'CONFIG_EXTRA_FIRMWARE_DIR="{SERIES / "extra"}"',
                     f'CONFIG_EXTRA_FIRMWARE_DIR="{extra}"'))
        result = kmake(series_run.tree, out, "olddefconfig", "vmlinux")
        assert result.returncode != 0
        assert "CONFIG_EXTRA_FIRMWARE: fwembed/seven.bin also in" in result.stderr
    finally:
        (out / ".config").write_text(config)


@pytest.mark.kernel
def test_patched_kernel_without_any_firmware_boots(series_run, tmp_path):
    """With no generated directory and no EXTRA_FIRMWARE, the kernel builds and boots."""
    out = SERIES / "versatile" / "linux"
    configure(series_run.tree, out, "CONFIG_FW_LOADER_BUILTIN_SELFTEST=y\n"
                                    "# CONFIG_FW_LOADER_USER_HELPER is not set\n")
    config = (out / ".config").read_text()
    assert 'CONFIG_FW_LOADER_GENERATED_DIR=""' in config
    assert 'CONFIG_EXTRA_FIRMWARE=""' in config
    images = kmake(series_run.tree, out, "zImage", "versatile-pb.dtb")
    assert images.returncode == 0, images.stderr[-3000:]
    manifest = tmp_path / "manifest.json"
    manifest.write_text('{"fwembed_manifest": 1, "entries": []}\n')
    boot = sh([PYTHON, HARNESS, "boot", "--board", ROOT / "boards/versatile",
               "--kernel", out / "arch/arm/boot/zImage",
               "--dtb", out / "arch/arm/boot/dts/versatile-pb.dtb",
               "--manifest", manifest, "--log", SERIES / "console-empty.log"], ROOT)
    assert boot.returncode == 0, boot.stdout + boot.stderr
    console = (SERIES / "console-empty.log").read_text()
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
	.balign 4
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
	.balign 4
	.dc.a .Lname, .Ldata, .Lend - .Ldata, .Lend - .Ldata, 0, 0
"""


def boot_with_extra_object(series_run, tmp_path, name, source, entry):
    """Boot the final kernel with the sample table plus one hand-made object,
    which adds the entry called ``entry``."""
    out = SERIES / "versatile" / "linux"
    fwdir = tmp_path / "fw"
    shutil.copytree(SERIES / "fw", fwdir)
    (fwdir / f"{name}.S").write_text(source)
    with open(fwdir / "objects.mk", "a", encoding="utf-8") as objects:
        objects.write(f"builtin-fw-objs += {name}.o\n")
    configure(series_run.tree, out, f'CONFIG_FW_LOADER_GENERATED_DIR="{fwdir}"\n'
                                    "CONFIG_FW_LOADER_BUILTIN_SELFTEST=y\n"
                                    "# CONFIG_FW_LOADER_USER_HELPER is not set\n" + DECODERS)
    images = kmake(series_run.tree, out, "zImage", "versatile-pb.dtb")
    assert images.returncode == 0, images.stderr[-3000:]
    log = SERIES / f"console-{name}.log"
    boot = sh([PYTHON, HARNESS, "boot", "--board", ROOT / "boards/versatile",
               "--kernel", out / "arch/arm/boot/zImage",
               "--dtb", out / "arch/arm/boot/dts/versatile-pb.dtb",
               "--manifest", fwdir / "manifest.json", "--log", log,
               "--extra-firmware", entry], ROOT)
    return boot, log.read_text()


@pytest.mark.kernel
def test_entry_with_data_outside_its_section_is_refused(series_run, tmp_path):
    """Data the kernel would not know as built in is refused with a warning,
    never handed out (release_firmware() would vfree() it)."""
    boot, console = boot_with_extra_object(series_run, tmp_path, "misplaced", MISPLACED_S,
                                           MISPLACED_NAME)
    assert boot.returncode != 0
    assert f"built-in firmware {MISPLACED_NAME}: data outside .builtin_fw_data, ignored" \
        in console
    assert f'# error=-2 name="{MISPLACED_NAME}"' in console
    # Only it fails: its own request, and its partial read.
    assert re.search(r"^# partial: raw=\d+ compressed=\d+ failed=1$", console, re.M)
    assert re.search(r"^# fw_builtin_selftest: pass:\d+ fail:2 ", console, re.M)


@pytest.mark.kernel
def test_unsorted_table_warns_once_and_every_entry_still_loads(series_run, tmp_path):
    """A table out of order gets one boot warning; lookup falls back and finds every entry."""
    boot, console = boot_with_extra_object(series_run, tmp_path, "out-of-order",
                                           OUT_OF_ORDER_S, OUT_OF_ORDER_NAME)
    assert boot.returncode == 0, boot.stdout + boot.stderr
    assert console.count("built-in firmware table is not sorted") == 1
    digest = hashlib.sha256(OUT_OF_ORDER_DATA).hexdigest()
    assert f'# size={len(OUT_OF_ORDER_DATA)} sha256={digest} name="{OUT_OF_ORDER_NAME}"' \
        in console
