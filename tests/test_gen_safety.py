"""fwembed gen and the user's files: what it refuses, removes, replaces and reads.

gen owns only the files its record names; a run replaces the whole set of
outputs at once or not at all; a source is the file it opens, not the way
its path is spelled.
"""

import json
import os
import signal
import subprocess
import time

import pytest

from conftest import FWEMBED, PYTHON, run_fwembed, snapshot, write_list
from fwembedlib.entry import Entry
from fwembedlib.errors import FwembedError
from fwembedlib.source import Source


def gen(*args):
    return run_fwembed("gen", "-q", *args)


def as_foreground_job():
    """Ctrl-C reaches a foreground job, whose SIGINT is at its default. A
    shell without job control starts background commands with SIGINT
    ignored, and make check may run so; the runs these tests interrupt
    must not inherit that."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def leftovers(folder):
    """Staging folders or temporary files that a run left beside its output."""
    return sorted(p.name for p in folder.iterdir() if ".fwembed-" in p.name or
                  p.name.endswith(".tmp"))


def test_directory_without_a_record_is_refused_and_kept(fwtree, tmp_path):
    """A blob-* file that fwembed did not write is neither removed nor replaced."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "blob-0123456789abcdef.bin").write_bytes(b"the user's own")
    before = snapshot(out)
    result = gen("--list", write_list(fwtree, "a one.bin\n"), "--out", out)
    assert result.returncode == 1
    assert f"{out}: error: output directory: holds 'blob-0123456789abcdef.bin' but no " \
           "record of fwembed's" in result.stderr
    assert snapshot(out) == before


def test_file_added_to_an_owned_directory_is_refused_and_kept(fwtree, tmp_path):
    """A file put into gen's output directory after a run stops the next run."""
    out = tmp_path / "out"
    path = write_list(fwtree, "a one.bin\n")
    assert gen("--list", path, "--out", out).returncode == 0
    (out / "notes.txt").write_text("mine")
    before = snapshot(out)
    result = gen("--list", path, "--out", out)
    assert result.returncode == 1
    assert "holds 'notes.txt', which fwembed did not write" in result.stderr
    assert snapshot(out) == before


def test_empty_existing_directory_is_used(fwtree, tmp_path):
    """An empty directory is fwembed's to fill."""
    out = tmp_path / "out"
    out.mkdir()
    assert gen("--list", write_list(fwtree, "a one.bin\n"), "--out", out).returncode == 0
    assert (out / "table.S").is_file()


@pytest.mark.parametrize("where, message", [
    (".", "is the input directory"),
    ("./out", "lies inside the input directory"),
    ("..", "contains the input directory"),
])
def test_out_overlapping_the_input_directory_is_refused(fwtree, tmp_path, where, message):
    """--out may not be, lie inside or contain --dir; nothing is written."""
    out = (fwtree / where).resolve()
    before = snapshot(tmp_path)
    result = gen("--dir", fwtree, "--out", out)
    assert result.returncode == 1
    assert f"output directory: {message}" in result.stderr
    assert snapshot(tmp_path) == before


def test_out_holding_a_listed_source_is_refused(fwtree, tmp_path):
    """A list whose source lies in --out (here through a symlinked folder) is refused."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "mine.bin").write_bytes(b"data")
    os.symlink(out, fwtree / "via")
    result = gen("--list", write_list(fwtree, "a via/mine.bin\n"), "--out", out)
    assert result.returncode == 1
    assert "output directory: holds the input file" in result.stderr
    assert (out / "mine.bin").read_bytes() == b"data"


def test_empty_out_is_a_usage_error(fwtree):
    """--out '' names no directory: usage error, exit status 2."""
    result = gen("--list", write_list(fwtree, "a one.bin\n"), "--out", "")
    assert result.returncode == 2, result.stderr
    assert "--out" in result.stderr


def test_failure_after_hashing_keeps_earlier_outputs(fwtree, tmp_path):
    """An encoder failure half-way leaves the earlier outputs byte-identical
    (timestamps too) and no staging folder behind."""
    out = tmp_path / "out"
    path = write_list(fwtree, "a one.bin\nb ramp.bin\n")
    assert gen("--list", path, "--out", out).returncode == 0
    before = snapshot(out)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    failing = bin_dir / "zstd"
    failing.write_text("#!/bin/sh\ncase \"$1\" in --version) echo zstd 0;; "
                       "*) echo 'out of space' >&2; exit 1;; esac\n")
    failing.chmod(0o755)
    write_list(fwtree, "a one.bin\nb ramp.bin\nc seven.bin compress=zstd\n")
    result = subprocess.run([PYTHON, FWEMBED, "gen", "--list", path, "--out", out],
                            capture_output=True, text=True, check=False,
                            env=dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}"))
    assert result.returncode == 1
    assert "failed: out of space" in result.stderr
    assert snapshot(out) == before
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("signum, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupted_run_keeps_earlier_outputs(fwtree, tmp_path, signum, status):
    """Ctrl-C or SIGTERM while a large entry is being compressed: the earlier
    outputs stay byte-identical and the staging folder is removed."""
    out = tmp_path / "out"
    path = write_list(fwtree, "a one.bin\n")
    assert gen("--list", path, "--out", out).returncode == 0
    before = snapshot(out)
    (fwtree / "big.bin").write_bytes(os.urandom(32 << 20))
    write_list(fwtree, "a one.bin\nbig big.bin compress=xz\n")
    proc = subprocess.Popen([PYTHON, FWEMBED, "gen", "--list", path, "--out", out],
                            stderr=subprocess.PIPE, text=True, preexec_fn=as_foreground_job)
    deadline = time.monotonic() + 60
    while not leftovers(tmp_path) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    assert leftovers(tmp_path), "the run ended before it staged anything"
    time.sleep(0.5)
    proc.send_signal(signum)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == status, stderr
    assert "fwembed: interrupted" in stderr and "Traceback" not in stderr
    assert snapshot(out) == before
    assert leftovers(tmp_path) == []


def test_changed_copy_of_the_right_size_is_refused_and_kept(fwtree, tmp_path):
    """A data copy in --out written to since the run that made it is neither
    trusted for its size nor replaced: its bytes are someone else's now."""
    out = tmp_path / "out"
    path = write_list(fwtree, "r ramp.bin\n")
    assert gen("--list", path, "--out", out).returncode == 0
    copy = out / "blob-40aff2e9d2d8922e.bin"
    copy.write_bytes(bytes(256))
    result = gen("--list", path, "--out", out)
    assert result.returncode == 1
    assert "'blob-40aff2e9d2d8922e.bin' was changed after fwembed wrote it" in result.stderr
    assert copy.read_bytes() == bytes(256)


def test_recorded_name_replaced_by_the_user_is_refused_and_kept(fwtree, tmp_path):
    """A file moved over a name fwembed recorded (a new inode) is the user's."""
    out = tmp_path / "out"
    path = write_list(fwtree, "r ramp.bin\n")
    assert gen("--list", path, "--out", out).returncode == 0
    (tmp_path / "edited").write_text("my names\n")
    os.replace(tmp_path / "edited", out / "names.txt")
    before = snapshot(out)
    result = gen("--list", path, "--out", out)
    assert result.returncode == 1
    assert "'names.txt' was changed after fwembed wrote it" in result.stderr
    assert snapshot(out) == before


def test_copied_output_tree_is_still_recognised(fwtree, tmp_path):
    """Copied with new inodes (cp -a), the outputs still hold what fwembed
    wrote, which their SHA-256 in the record shows: the next run goes on."""
    path = write_list(fwtree, "r ramp.bin\n")
    assert gen("--list", path, "--out", tmp_path / "out").returncode == 0
    subprocess.run(["cp", "-a", tmp_path / "out", tmp_path / "copy"], check=True)
    write_list(fwtree, "r ramp.bin\ns seven.bin\n")
    result = gen("--list", path, "--out", tmp_path / "copy")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "copy" / "names.txt").read_text() == "r\ns\n"


def start_long_run(fwtree, tmp_path, out):
    """A gen run busy compressing 32 MiB, once it has staged something."""
    path = write_list(fwtree, "a one.bin\n")
    assert gen("--list", path, "--out", out).returncode == 0
    (fwtree / "big.bin").write_bytes(os.urandom(32 << 20))
    write_list(fwtree, "a one.bin\nbig big.bin compress=xz\n")
    proc = subprocess.Popen([PYTHON, FWEMBED, "gen", "-q", "--list", path, "--out", out],
                            stderr=subprocess.PIPE, text=True, preexec_fn=as_foreground_job)
    deadline = time.monotonic() + 60
    while not leftovers(out.parent) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    assert leftovers(out.parent), "the run ended before it staged anything"
    return proc


def test_file_added_during_a_run_stops_it_and_is_kept(fwtree, tmp_path):
    """A file put into --out while gen works is found after the exchange,
    which is undone: the run fails, the file and the old outputs stay."""
    out = tmp_path / "out"
    proc = start_long_run(fwtree, tmp_path, out)
    before = snapshot(out)
    (out / "mine.txt").write_text("precious")
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 1, stderr
    assert "holds 'mine.txt', which fwembed did not write" in stderr
    assert (out / "mine.txt").read_text() == "precious"
    after = snapshot(out)
    after.pop("mine.txt")
    assert after == before
    assert leftovers(tmp_path) == []


def test_out_swapped_for_a_symlink_during_a_run_is_left_alone(fwtree, tmp_path):
    """--out replaced by a symlink to another folder while gen works: the
    run fails and deletes nothing in that folder."""
    out = tmp_path / "out"
    proc = start_long_run(fwtree, tmp_path, out)
    other = tmp_path / "other"
    other.mkdir()
    for name in ("names.txt", "table.S"):
        (other / name).write_text("not fwembed's")
    os.rename(out, tmp_path / "moved")
    os.symlink(other, out)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 1, stderr
    assert "was replaced while fwembed was running" in stderr
    assert sorted(p.name for p in other.iterdir()) == ["names.txt", "table.S"]
    assert out.is_symlink()


def test_unchanged_copy_is_linked_not_rewritten(fwtree, tmp_path):
    """A copy the record vouches for keeps its inode and timestamp across runs."""
    out = tmp_path / "out"
    path = write_list(fwtree, "r ramp.bin\n")
    assert gen("--list", path, "--out", out).returncode == 0
    before = os.stat(out / "blob-40aff2e9d2d8922e.bin")
    write_list(fwtree, "r ramp.bin\ns seven.bin\n")
    assert gen("--list", path, "--out", out).returncode == 0
    after = os.stat(out / "blob-40aff2e9d2d8922e.bin")
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_spellings_through_a_symlinked_folder_are_different_files(fwtree, tmp_path):
    """'b.bin' and 'link/../b.bin' are two files when link points elsewhere:
    each name gets its own file's bytes."""
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "sub").mkdir(parents=True)
    (elsewhere / "b.bin").write_bytes(b"elsewhere")
    (fwtree / "b.bin").write_bytes(b"here")
    os.symlink(elsewhere / "sub", fwtree / "link")
    path = write_list(fwtree, "here b.bin\nthere link/../b.bin\n")
    out = tmp_path / "out"
    assert gen("--list", path, "--out", out).returncode == 0
    entries = {e["name"]: e for e in json.loads((out / "manifest.json").read_text())["entries"]}
    assert (out / f"{entries['here']['blob']}.bin").read_bytes() == b"here"
    assert (out / f"{entries['there']['blob']}.bin").read_bytes() == b"elsewhere"


def test_hard_links_are_one_source(fwtree, tmp_path):
    """Two names for one inode share one data object."""
    os.link(fwtree / "ramp.bin", fwtree / "ramp-link.bin")
    path = write_list(fwtree, "a ramp.bin\nb ramp-link.bin\n")
    out = tmp_path / "out"
    assert gen("--list", path, "--out", out).returncode == 0
    assert sorted(p.name for p in out.glob("blob-*.bin")) == ["blob-40aff2e9d2d8922e.bin"]


def test_fifo_in_a_list_is_refused_at_once(fwtree, tmp_path):
    """A FIFO is refused without being read, so the run cannot block on it."""
    os.mkfifo(fwtree / "pipe")
    path = write_list(fwtree, "p pipe\n")
    result = subprocess.run([PYTHON, FWEMBED, "gen", "--list", path, "--out", tmp_path / "out"],
                            capture_output=True, text=True, timeout=30, check=False)
    assert result.returncode == 1
    assert f"{path}:1: error: source 'pipe': not a regular file (a FIFO)" in result.stderr


def test_source_that_became_a_fifo_is_refused_on_the_descriptor(tmp_path):
    """Opened with O_NONBLOCK and checked with fstat(): a FIFO where a file
    was listed does not block and is named."""
    os.mkfifo(tmp_path / "pipe")
    entry = Entry(name="p", source="pipe", path=tmp_path / "pipe", where="list:1")
    with pytest.raises(FwembedError, match=r"list:1: error: source 'pipe': not a regular "
                                           r"file \(a FIFO\)"):
        with Source(entry):
            pass


def test_source_that_became_a_symlink_is_refused_where_links_are_not_allowed(tmp_path):
    """A directory-mode file swapped for a symlink is caught by O_NOFOLLOW."""
    (tmp_path / "real.bin").write_bytes(b"x")
    os.symlink(tmp_path / "real.bin", tmp_path / "swapped.bin")
    entry = Entry(name="s", source="swapped.bin", path=tmp_path / "swapped.bin",
                  where="dir/swapped.bin", nofollow=True)
    with pytest.raises(FwembedError, match="is a symlink, where a regular file was found"):
        with Source(entry):
            pass


def test_symlinked_out_stays_a_symlink(fwtree, tmp_path):
    """An --out that is a symlink to a directory: the directory it points to
    gets the outputs, the link itself is kept."""
    real = tmp_path / "real"
    real.mkdir()
    os.symlink(real, tmp_path / "out")
    assert gen("--list", write_list(fwtree, "a one.bin\n"), "--out",
               tmp_path / "out").returncode == 0
    assert (tmp_path / "out").is_symlink()
    assert (real / "table.S").is_file()
