"""make CC_WRAPPER=distcc: a board's kernel compiled on a distcc server.

Vendors share kernel builds between machines through distcc. The test
starts Debian's distccd on 127.0.0.1 only, builds and boots virt64 through
it in a build directory of its own with an empty ccache (so that every
compilation misses and ccache hands it to distcc, as CCACHE_PREFIX), and
reads in distccd's own log that the kernel's C files were compiled there.
"""

import re
import shutil
import socket
import subprocess

import pytest

from conftest import ROOT, run_command

OUT = ROOT / "build" / "virt64-distcc"
COMPILER = "aarch64-linux-gnu-gcc"


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(name="distccd")
def fixture_distccd(tmp_path):
    """distccd listening on 127.0.0.1 only; yields (port, log path)."""
    port = free_port()
    log = tmp_path / "distccd.log"
    with open(log, "wb") as stderr:
        daemon = subprocess.Popen(["distccd", "--daemon", "--no-detach", "--listen", "127.0.0.1",
                                   "--allow", "127.0.0.1", "--port", str(port), "--jobs", "2",
                                   "--log-stderr", "--log-level", "info"], stderr=stderr)
    try:
        yield port, log
    finally:
        daemon.terminate()
        daemon.wait(timeout=30)


def compiled_on_server(log):
    """The sources distccd's job summaries say it compiled with COMPILER
    (which ccache names by its full path)."""
    return re.findall(rf"COMPILE_OK exit:0 .* (?:\S*/)?{re.escape(COMPILER)} (\S+)$",
                      log.read_text(errors="replace"), re.M)


@pytest.mark.kernel
def test_board_builds_through_distccd_on_localhost(distccd, tmp_path, monkeypatch):
    """Every C file of a virt64 build misses the empty ccache and goes to
    distccd, which compiles it; the kernel then passes every check."""
    port, log = distccd
    shutil.rmtree(OUT, ignore_errors=True)
    monkeypatch.setenv("DISTCC_HOSTS", f"127.0.0.1:{port}/2")
    # Fail rather than compile here when the server does not answer.
    monkeypatch.setenv("DISTCC_FALLBACK", "0")
    monkeypatch.setenv("CCACHE_DIR", str(tmp_path / "ccache"))
    result = run_command("make run BOARD=virt64 OUT_NAME=virt64-distcc CC_WRAPPER=distcc")
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    assert 'CCACHE_PREFIX="distcc" make' in result.stdout
    assert re.search(r" checks passed, 0 failed", result.stdout)
    sources = compiled_on_server(log)
    objects = list((OUT / "linux").rglob("*.o"))
    assert len(sources) > len(objects) // 2, (len(sources), len(objects))
    assert any(s.endswith("drivers/base/firmware_loader/builtin/main.c") for s in sources), sources
