"""fwembed needs: MODULE_FIRMWARE names of a built kernel, found or not.

The build directories here are tiny: a modules.builtin.modinfo written as
Kbuild writes it (objcopy -j .modinfo of vmlinux.o: NUL-terminated
"module.key=value" strings), and modules compiled by the host's gcc with
the .modinfo strings MODULE_FIRMWARE() would give. Lists written by needs
go through the real generator.
"""

import hashlib
import json
import lzma
import re
import subprocess

import pytest

from conftest import run_fwembed, snapshot


def builtin_modinfo(build, *tags):
    build.mkdir(parents=True, exist_ok=True)
    (build / "modules.builtin.modinfo").write_bytes(b"".join(t.encode() + b"\0" for t in tags))


def compile_module(build, path, *tags):
    """A relocatable ELF object, as a .ko is, whose .modinfo holds ``tags``."""
    source = build / "module.c"
    source.write_text("".join(
        f'static const char tag{i}[] __attribute__((used, section(".modinfo"))) = "{t}";\n'
        for i, t in enumerate(tags)))
    (build / path).parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["gcc", "-c", "-o", build / path, source], check=True)


def needs(build, firmware, *args):
    return run_fwembed("needs", build, "--firmware-dir", firmware, *args)


def row(stdout, name):
    """The report's columns for ``name``."""
    for line in stdout.splitlines():
        if line.startswith(name + "  "):
            return re.split(r"\s{2,}", line[len(name):].strip())
    raise AssertionError(f"no row for {name!r} in:\n{stdout}")


@pytest.fixture
def firmware(tmp_path):
    folder = tmp_path / "lib-firmware"
    (folder / "vendor").mkdir(parents=True)
    (folder / "vendor" / "a.bin").write_bytes(b"image a\n")
    (folder / "vendor" / "c.bin.xz").write_bytes(lzma.compress(b"image c\n"))
    return folder


def test_builtin_names_are_marked_present_or_missing(tmp_path, firmware):
    """Each firmware= tag of a built-in driver gets a row: present, or missing."""
    builtin_modinfo(tmp_path / "kb", "drv.license=GPL", "drv.firmware=vendor/a.bin",
                    "drv.firmware=vendor/b.bin")
    result = needs(tmp_path / "kb", firmware)
    assert result.returncode == 0, result.stderr
    assert row(result.stdout, "vendor/a.bin") == ["drv", "present"]
    assert row(result.stdout, "vendor/b.bin") == ["drv", "missing"]
    assert "2 names declared: 1 present, 1 missing, 0 patterns" in result.stdout


def test_a_compressed_file_counts_as_present(tmp_path, firmware):
    """NAME.xz is found as the kernel's loader finds it."""
    builtin_modinfo(tmp_path / "kb", "drv.firmware=vendor/c.bin")
    result = needs(tmp_path / "kb", firmware)
    assert row(result.stdout, "vendor/c.bin") == ["drv", "present as c.bin.xz"]


def test_module_names_come_from_each_ko(tmp_path, firmware):
    """modules.order's modules are read, under their name= tag."""
    build = tmp_path / "kb"
    builtin_modinfo(build, "other.license=GPL")
    compile_module(build, "drivers/x/my-mod.ko", "license=GPL", "firmware=vendor/a.bin",
                   "name=my_mod")
    (build / "modules.order").write_text("drivers/x/my-mod.ko\n")
    result = needs(build, firmware)
    assert result.returncode == 0, result.stderr
    assert row(result.stdout, "vendor/a.bin") == ["my_mod (module)", "present"]


def test_modules_order_of_linux_6_2_names_objects(tmp_path, firmware):
    """From 6.2 modules.order lists foo.o for foo.ko."""
    build = tmp_path / "kb"
    builtin_modinfo(build)
    compile_module(build, "drivers/y.ko", "firmware=vendor/b.bin", "name=y")
    (build / "modules.order").write_text("drivers/y.o\n")
    result = needs(build, firmware)
    assert row(result.stdout, "vendor/b.bin") == ["y (module)", "missing"]


def test_a_module_not_built_is_an_error(tmp_path, firmware):
    """modules.order naming a missing .ko: path:line, exit 1."""
    build = tmp_path / "kb"
    builtin_modinfo(build)
    (build / "modules.order").write_text("drivers/a.ko\ndrivers/gone.ko\n")
    compile_module(build, "drivers/a.ko", "name=a")
    result = needs(build, firmware)
    assert result.returncode == 1
    assert result.stderr.startswith(f"{build}/modules.order:2: error: ")
    assert "make modules" in result.stderr


def test_not_a_build_directory(tmp_path, firmware):
    """A folder without modules.builtin.modinfo: one error line, exit 1."""
    (tmp_path / "src").mkdir()
    result = needs(tmp_path / "src", firmware)
    assert result.returncode == 1
    assert result.stderr == (f"{tmp_path}/src: error: no modules.builtin.modinfo: give the "
                             "output directory of a built kernel (its O=, after 'make "
                             "vmlinux')\n")


def test_a_pattern_is_counted_not_listed(tmp_path, firmware):
    """A wildcard name reports how many files match, and is not written."""
    builtin_modinfo(tmp_path / "kb", "drv.firmware=vendor/*.bin*", "drv.firmware=vendor/a.bin")
    result = needs(tmp_path / "kb", firmware, "--write-list", tmp_path / "out.list")
    assert result.returncode == 0, result.stderr
    assert row(result.stdout, "vendor/*.bin*") == ["drv", "pattern: 2 files match, none listed"]
    assert "*" not in (tmp_path / "out.list").read_text().split("\n", 3)[3]


def test_versions_of_one_image_are_reported(tmp_path, firmware):
    """Names that differ only in a version are shown as one group; chips are not."""
    builtin_modinfo(tmp_path / "kb", "htc.firmware=htc_9271.fw",
                    "htc.firmware=ath9k_htc/htc_9271-1.4.0.fw",
                    "htc.firmware=ath9k_htc/htc_7010-1.4.0.fw")
    result = needs(tmp_path / "kb", firmware)
    versions = [line for line in result.stdout.splitlines() if line.startswith("versions:")]
    assert versions == ["versions: htc declares ath9k_htc/htc_9271-1.4.0.fw, htc_9271.fw: one "
                        "image in several versions (or chip revisions); the driver chooses "
                        "at run time, so fwembed chooses none and lists every one present"]


def test_the_written_list_embeds_the_files_found(tmp_path, firmware):
    """gen takes the list; each entry holds its file's bytes (decoded for .xz)."""
    (firmware / "with space").mkdir()
    (firmware / "with space" / "d v2.bin").write_bytes(b"image d\n")
    builtin_modinfo(tmp_path / "kb", "drv.firmware=vendor/a.bin", "drv.firmware=vendor/c.bin",
                    "drv.firmware=vendor/b.bin", "drv.firmware=with space/d v2.bin")
    out = tmp_path / "needed.list"
    result = needs(tmp_path / "kb", firmware, "--write-list", out)
    assert result.returncode == 0, result.stderr
    assert result.stdout.endswith(f"wrote {out}: 3 entries\n")
    gen = run_fwembed("gen", "-q", "--list", out, "--out", tmp_path / "fw")
    assert gen.returncode == 0, gen.stderr
    manifest = json.loads((tmp_path / "fw" / "manifest.json").read_text())
    digests = {e["name"]: e["sha256"] for e in manifest["entries"]}
    assert digests == {name: hashlib.sha256(data).hexdigest() for name, data in
                       [("vendor/a.bin", b"image a\n"), ("vendor/c.bin", b"image c\n"),
                        ("with space/d v2.bin", b"image d\n")]}


def test_an_existing_list_is_kept_without_force(tmp_path, firmware):
    """--write-list over an existing file fails and leaves it byte-identical."""
    builtin_modinfo(tmp_path / "kb", "drv.firmware=vendor/a.bin")
    out = tmp_path / "mine.list"
    out.write_text("my own notes\n")
    before = snapshot(tmp_path)
    result = needs(tmp_path / "kb", firmware, "--write-list", out)
    assert result.returncode == 1
    assert result.stderr == f"{out}: error: already exists; give --force to replace it\n"
    assert snapshot(tmp_path) == before
    assert needs(tmp_path / "kb", firmware, "--write-list", out, "--force").returncode == 0
    assert "vendor/a.bin" in out.read_text()


def test_nothing_found_writes_nothing(tmp_path, firmware):
    """No declared name present: an error, and no list."""
    builtin_modinfo(tmp_path / "kb", "drv.firmware=vendor/b.bin")
    result = needs(tmp_path / "kb", firmware, "--write-list", tmp_path / "out.list")
    assert result.returncode == 1
    assert "no list written" in result.stderr
    assert not (tmp_path / "out.list").exists()
