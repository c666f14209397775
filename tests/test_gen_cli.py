"""fwembed gen's options for build systems: --dry-run, --include/--exclude,
--version, the progress line."""

import os
import pty
import subprocess

from conftest import FWEMBED, PYTHON, run_fwembed, snapshot, write_list
from fwembedlib import __version__


def test_version():
    """--version names the release that the manifest also records."""
    result = run_fwembed("--version")
    assert (result.returncode, result.stdout) == (0, f"fwembed {__version__}\n")


def test_dry_run_prints_the_plan_and_writes_nothing(fwtree, tmp_path):
    """--dry-run gives each name's size, stored size, encoding and reason, and
    leaves the output directory as it was, with no work folder behind."""
    path = write_list(fwtree, "r ramp.bin\n%default compress=xz\nz ramp.bin\n"
                              "a seven.bin compress=auto\n")
    out = tmp_path / "out"
    assert run_fwembed("gen", "-q", "--list", write_list(fwtree, "r ramp.bin\n", "old.list"),
                       "--out", out).returncode == 0
    before = snapshot(out)
    result = run_fwembed("gen", "--dry-run", "--list", path, "--out", out)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["NAME", "SIZE", "STORED", "ENCODING", "WHY"]
    rows = {line.split()[0]: line.split(None, 4) for line in lines[1:]}
    assert rows["r"] == ["r", "256", "256", "none", "no compress= and no --compress"]
    assert rows["z"][1:4] == ["256", rows["z"][2], "xz"]
    assert rows["z"][4] == "compress=xz (%default at line 2)"
    assert rows["a"][4].startswith("compress=auto (its line): xz ")
    assert rows["a"][4].endswith("neither saves 1/8")
    assert snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "src"]


def test_include_and_exclude_select_files(tmp_path):
    """--include and --exclude match names below --dir; excluded files are not read."""
    src = tmp_path / "src"
    (src / "a").mkdir(parents=True)
    (src / "a" / "x.bin").write_bytes(b"x")
    (src / "a" / "x.txt").write_bytes(b"t")
    (src / "b.bin").write_bytes(b"b")
    os.mkfifo(src / "a" / "pipe.bin")
    result = run_fwembed("gen", "-q", "--dir", src, "--include", "*.bin", "--exclude",
                         "*pipe*", "--out", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out" / "names.txt").read_text() == "a/x.bin\nb.bin\n"


def test_include_without_dir_is_a_usage_error(fwtree, tmp_path):
    result = run_fwembed("gen", "--list", write_list(fwtree, "a one.bin\n"), "--include", "*",
                         "--out", tmp_path / "out")
    assert result.returncode == 2
    assert "--include and --exclude select files of --dir" in result.stderr


def test_selection_that_takes_nothing_is_an_error(fwtree, tmp_path):
    result = run_fwembed("gen", "--dir", fwtree, "--include", "*.nothing",
                         "--out", tmp_path / "out")
    assert result.returncode == 1
    assert f"{fwtree}: error: no file of the firmware directory is selected" in result.stderr


def run_on_a_terminal(args):
    """Run fwembed with standard error on a pseudo-terminal; return what it showed."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen([PYTHON, str(FWEMBED), *map(str, args)], stdout=subprocess.DEVNULL,
                            stderr=follower)
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # EIO: the terminal's last writer is gone
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    assert proc.wait() == 0
    return shown.decode()


def test_progress_line_on_a_terminal_for_long_runs(tmp_path):
    """A run of more than a second shows "N/TOTAL files hashed, ..." on a terminal,
    then clears it; a short one, or one whose stderr is a file, shows nothing."""
    src = tmp_path / "src"
    src.mkdir()
    for i in range(24):  # xz -9 of 512 KiB of random bytes: about 0.15 s each
        (src / f"f{i}.bin").write_bytes(os.urandom(512 << 10))
    long_run = run_on_a_terminal(["gen", "-q", "-j", "1", "--compress", "xz", "--dir", src,
                                  "--out", tmp_path / "out"])
    assert "/24 files hashed" in long_run and long_run.endswith("\r\x1b[K")
    (tmp_path / "tiny").mkdir()
    (tmp_path / "tiny" / "t.bin").write_bytes(b"t")
    assert run_on_a_terminal(["gen", "-q", "--dir", tmp_path / "tiny",
                              "--out", tmp_path / "out2"]) == ""
    logged = run_fwembed("gen", "-q", "-j", "1", "--compress", "xz", "--dir", src,
                         "--out", tmp_path / "o3")
    assert logged.returncode == 0 and logged.stderr == ""
