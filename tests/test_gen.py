"""fwembed gen: outputs, determinism, write-if-changed, errors, exit codes."""

import json
import os
import pathlib
import shutil
import subprocess

from conftest import ROOT, run_fwembed, snapshot, write_list
from fwembedlib import emit

GOLDEN_INPUT = ROOT / "tests" / "data" / "golden-input"
GOLDEN = ROOT / "tests" / "data" / "golden"


def gen_list(list_path, out):
    result = run_fwembed("gen", "-q", "--list", list_path, "--out", out)
    assert result.returncode == 0, result.stderr
    return result


def test_golden_outputs(tmp_path):
    """The generated .S files, objects.mk and manifest match the golden copies."""
    gen_list(GOLDEN_INPUT / "firmware.list", tmp_path / "out")
    for golden in sorted(GOLDEN.iterdir()):
        assert (tmp_path / "out" / golden.name).read_text() == golden.read_text(), golden.name


def test_objects_mk_is_read_back():
    """objects_in_mk() returns exactly the objects objects_mk() lists, not the
    data-file lines that follow them."""
    text = (GOLDEN / "objects.mk").read_text()
    assert emit.objects_in_mk(text) == ["table.o", "data-27.o", "data-42.o"]


def test_identical_content_is_stored_once(tmp_path):
    """Two names for one file give one data object and one .bin copy."""
    gen_list(GOLDEN_INPUT / "firmware.list", tmp_path / "out")
    bins = sorted(p.name for p in (tmp_path / "out").glob("blob-*.bin"))
    assert bins == ["blob-03ac674216f3e15c-xz.bin", "blob-03ac674216f3e15c.bin",
                    "blob-e3b0c44298fc1c14.bin"]
    assert (tmp_path / "out" / "blob-03ac674216f3e15c.bin").read_bytes() == b"1234"


def test_identical_content_from_two_files_is_stored_once(fwtree, tmp_path):
    """Two different files with the same bytes share one data object."""
    shutil.copy(fwtree / "ramp.bin", fwtree / "ramp-copy.bin")
    path = write_list(fwtree, "a ramp.bin\nb ramp-copy.bin\n")
    gen_list(path, tmp_path / "out")
    assert len(list((tmp_path / "out").glob("blob-*.bin"))) == 1
    data = [p.read_text() for p in (tmp_path / "out").glob("data-*.S")]
    assert len(data) == 1 and data[0].count(".globl") == 4


def test_output_is_deterministic_across_directories(fwtree, tmp_path):
    """The same inputs give byte-identical outputs in two output directories."""
    path = write_list(fwtree, "a one.bin\nb ramp.bin license=MIT\n")
    gen_list(path, tmp_path / "one")
    gen_list(path, tmp_path / "two")
    first, second = snapshot(tmp_path / "one"), snapshot(tmp_path / "two")
    for name in first:
        if name not in ("fwembed.d", ".fwembed-stamp", ".fwembed-outputs"):
            assert first[name][0] == second[name][0], name


def test_second_run_rewrites_nothing(fwtree, tmp_path):
    """A run with unchanged inputs leaves every output's timestamp alone."""
    path = write_list(fwtree, "a one.bin\nb ramp.bin\n")
    gen_list(path, tmp_path / "out")
    before = snapshot(tmp_path / "out")
    result = run_fwembed("gen", "--list", path, "--out", tmp_path / "out")
    after = snapshot(tmp_path / "out")
    assert result.stdout == ""
    before.pop(".fwembed-stamp")
    after.pop(".fwembed-stamp")
    assert before == after


def object_of(source):
    """The data object that a content whose first source is ``source`` goes to."""
    return f"data-{int(emit.key_hash(source), 16) % emit.DATA_OBJECTS:02d}.S"


def test_data_is_packed_into_a_bounded_number_of_objects(tmp_path):
    """1,000 files give at most DATA_OBJECTS data objects, each content in
    the object its source path picks."""
    src = tmp_path / "src"
    src.mkdir()
    for i in range(1000):
        (src / f"f{i}.bin").write_bytes(b"%d" % i)
    result = run_fwembed("gen", "-q", "--dir", src, "--out", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    objects = emit.objects_in_mk((tmp_path / "out" / "objects.mk").read_text())
    assert len(objects) == 1 + emit.DATA_OBJECTS
    text = (tmp_path / "out" / object_of("f7.bin")).read_text()
    assert f".globl {emit.data_symbol('f7.bin')}\n" in text


def test_changed_content_same_size_touches_only_its_blob(fwtree, tmp_path):
    """Same size, new bytes: a new data copy and its object; the table and
    the other object are untouched."""
    path = write_list(fwtree, "a one.bin\nb ramp.bin\n")
    gen_list(path, tmp_path / "out")
    (fwtree / "one.bin").write_bytes(b"\x02")
    result = run_fwembed("gen", "--list", path, "--out", tmp_path / "out")
    updated = sorted(line.split()[1] for line in result.stdout.splitlines())
    names = sorted(pathlib.Path(p).name for p in updated)
    assert object_of("one.bin") != object_of("ramp.bin")
    assert names == sorted(["blob-dbc1b4c900ffe48d.bin", object_of("one.bin"),
                            "objects.mk", "manifest.json", "blob-4bf5122f344554c5.bin"])
    assert not (tmp_path / "out" / "blob-4bf5122f344554c5.bin").exists()


def test_changed_size_also_rewrites_the_table(fwtree, tmp_path):
    """New size: the table changes too, since it holds the size."""
    path = write_list(fwtree, "a one.bin\n")
    gen_list(path, tmp_path / "out")
    table = (tmp_path / "out" / "table.S").read_text()
    (fwtree / "one.bin").write_bytes(b"\x01\x02")
    gen_list(path, tmp_path / "out")
    assert (tmp_path / "out" / "table.S").read_text() != table


def test_renaming_an_entry_touches_no_data_object(fwtree, tmp_path):
    """A new name for the same source changes only the table and manifest."""
    path = write_list(fwtree, "a one.bin\n")
    gen_list(path, tmp_path / "out")
    blobs = {k: v for k, v in snapshot(tmp_path / "out").items() if k.startswith("blob-")}
    write_list(fwtree, "renamed one.bin\n")
    gen_list(path, tmp_path / "out")
    after = {k: v for k, v in snapshot(tmp_path / "out").items() if k.startswith("blob-")}
    assert after == blobs


def test_manifest_fields(fwtree, tmp_path):
    """manifest.json has name, size, sha256, stored_size, compression, builtin
    and lifetime."""
    path = write_list(fwtree, "z seven.bin license=MIT\na empty.bin\n")
    gen_list(path, tmp_path / "out")
    entries = json.loads((tmp_path / "out" / "manifest.json").read_text())["entries"]
    assert [e["name"] for e in entries] == ["a", "z"]
    assert entries[1] == {
        "name": "z", "size": 7, "stored_size": 7, "compression": "none",
        "sha256": "8bb0cf6eb9b17d0f7d22b456f121257dc1254e1f01665370476383ea776df414",
        "license": "MIT", "source": "seven.bin", "blob": "blob-8bb0cf6eb9b17d0f",
        "builtin": True, "lifetime": "kernel"}


def test_install_entry_is_left_out_of_the_image(fwtree, tmp_path):
    """install=yes: no table entry, name or data object, but a manifest entry."""
    path = write_list(fwtree, "a one.bin\nfs/b seven.bin install=yes license=MIT\n")
    gen_list(path, tmp_path / "out")
    out = tmp_path / "out"
    assert "fs/b" not in (out / "table.S").read_text()
    assert (out / "names.txt").read_text() == "a\n"
    assert sorted(p.name for p in out.glob("blob-*.bin")) == ["blob-4bf5122f344554c5.bin"]
    assert "blob-8bb0cf6eb9b17d0f" not in (out / "objects.mk").read_text()
    entries = json.loads((out / "manifest.json").read_text())["entries"]
    assert entries[1] == {
        "name": "fs/b", "size": 7, "stored_size": 7, "compression": "none",
        "sha256": "8bb0cf6eb9b17d0f7d22b456f121257dc1254e1f01665370476383ea776df414",
        "license": "MIT", "source": "seven.bin", "blob": None, "builtin": False,
        "lifetime": None}
    assert entries[0]["builtin"] is True


def test_table_is_sorted_by_strcmp_order(fwtree, tmp_path):
    """Entries are sorted bytewise, as strcmp() compares them."""
    path = write_list(fwtree, "b one.bin\nB one.bin\n_ one.bin\n\"a b\" one.bin\na one.bin\n")
    gen_list(path, tmp_path / "out")
    names = [e["name"] for e in
             json.loads((tmp_path / "out" / "manifest.json").read_text())["entries"]]
    assert names == ["B", "_", "a", "a b", "b"]


def test_depfile_lists_inputs_and_works_with_make(fwtree, tmp_path):
    """fwembed.d makes the stamp out of date when an input changes."""
    path = write_list(fwtree, "a one.bin\n\"sp ace\" seven.bin\n")
    out = tmp_path / "out"
    gen_list(path, out)
    depfile = (out / "fwembed.d").read_text()
    assert str(fwtree / "one.bin") in depfile and str(path) in depfile
    makefile = tmp_path / "Makefile"
    makefile.write_text(f"include {out}/fwembed.d\n{out}/.fwembed-stamp:\n\t@true\n")
    up_to_date = subprocess.run(["make", "-q", "-f", makefile, f"{out}/.fwembed-stamp"],
                                cwd=tmp_path, check=False)
    assert up_to_date.returncode == 0
    source_time = (fwtree / "seven.bin").stat().st_mtime_ns
    os.utime(out / ".fwembed-stamp", ns=(source_time - 10**9, source_time - 10**9))
    stale = subprocess.run(["make", "-q", "-f", makefile, f"{out}/.fwembed-stamp"],
                           cwd=tmp_path, check=False)
    assert stale.returncode == 1


def test_dir_mode_embeds_every_file(fwtree, tmp_path):
    """--dir embeds every regular file, named by relative path."""
    result = run_fwembed("gen", "-q", "--dir", fwtree, "--out", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    entries = json.loads((tmp_path / "out" / "manifest.json").read_text())["entries"]
    assert [e["name"] for e in entries] == ["empty.bin", "one.bin", "ramp.bin", "seven.bin"]


def test_bad_input_exits_1_and_keeps_earlier_outputs(fwtree, tmp_path):
    """A bad list gives exit 1, a located message, and changes no output."""
    path = write_list(fwtree, "a one.bin\n")
    gen_list(path, tmp_path / "out")
    before = snapshot(tmp_path / "out")
    write_list(fwtree, "a one.bin\nb missing.bin\n")
    result = run_fwembed("gen", "--list", path, "--out", tmp_path / "out")
    assert result.returncode == 1
    assert result.stderr == f"{path}:2: error: source 'missing.bin': no such file\n"
    assert snapshot(tmp_path / "out") == before


def test_bad_input_creates_no_output_directory(fwtree, tmp_path):
    """An error before writing leaves no trace at all."""
    path = write_list(fwtree, "a missing.bin\n")
    result = run_fwembed("gen", "--list", path, "--out", tmp_path / "out")
    assert result.returncode == 1
    assert not (tmp_path / "out").exists()


def test_output_under_a_file_is_an_error(fwtree, tmp_path):
    """An output path below a regular file is refused before any write."""
    (tmp_path / "file").write_text("x")
    path = write_list(fwtree, "a one.bin\n")
    result = run_fwembed("gen", "--list", path, "--out", tmp_path / "file" / "out")
    assert result.returncode == 1
    assert "is not a directory" in result.stderr


def test_usage_errors_exit_2(tmp_path):
    """Missing or conflicting arguments are usage errors (exit 2)."""
    assert run_fwembed().returncode == 2
    assert run_fwembed("gen", "--out", tmp_path).returncode == 2
    both = run_fwembed("gen", "--list", "x", "--dir", "y", "--out", tmp_path)
    assert both.returncode == 2
    assert run_fwembed("gen", "--lis", "x", "--out", tmp_path).returncode == 2


def test_help_is_the_module_docstring():
    """--help shows the command summary."""
    result = run_fwembed("--help")
    assert result.returncode == 0
    assert "fwembed gen (--list FILE | --dir DIR) --out OUTDIR" in result.stdout


def test_dir_mode_depfile_lists_every_directory(fwtree, tmp_path):
    """In --dir mode the depfile names each directory, so new files are noticed."""
    (fwtree / "sub").mkdir()
    (fwtree / "sub" / "x.fw").write_bytes(b"x")
    result = run_fwembed("gen", "-q", "--dir", fwtree, "--out", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    deps = [line.strip(" \\") for line in
            (tmp_path / "out" / "fwembed.d").read_text().split("\n\n")[0].splitlines()[1:]]
    assert str(fwtree) in deps and str(fwtree / "sub") in deps
    assert str(fwtree / "sub" / "x.fw") in deps
