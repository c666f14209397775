"""make CC_WRAPPER=distcc: a board's kernel compiled through a distcc server.

Vendors share kernel builds between machines through distcc. With ccache
installed, make hands distcc to ccache as its CCACHE_PREFIX, so that only
what misses the cache is compiled remotely. The test starts Debian's
distccd on 127.0.0.1 only and builds virt64 again through it, in the
board's build directory, with a build number (KBUILD_BUILD_VERSION, the
"#N" of the version string) made up for this run. Only init/version.c and
init/version-timestamp.c spell it out, through the UTS_VERSION header that
Kbuild writes for each, so they are the sources that no cache can hold,
however many builds the cache has seen; distccd must compile them. Kbuild
compiles them again, and kernel/fork.c, whose object the test removes
first: the configuration is unchanged, so ccache answers that one from
the board's build, and it never reaches the server. distccd's own log
tells which files it compiled.
"""

import random
import re
import socket
import subprocess

import pytest

from conftest import ROOT, build_group, run_command

OUT = ROOT / "build" / "virt64"
COMPILER = "aarch64-linux-gnu-gcc"
# A source that expands the build number (as UTS_VERSION).
NEW_SOURCE = "init/version-timestamp.c"
# Built the same whatever the build number; its object is removed, so that
# Kbuild compiles it again and ccache answers.
CACHED_SOURCE = "kernel/fork.c"


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


def why_nothing_came(sources, log):
    """distccd's log and ccache's counters, for a failed assertion."""
    stats = subprocess.run(["ccache", "--print-stats"], capture_output=True, text=True,
                           check=False).stdout
    return f"{sources}\ndistccd.log:\n{log.read_text(errors='replace')[-3000:]}\nccache:\n{stats}"


@pytest.mark.kernel
@build_group("virt64")
def test_only_cache_misses_go_to_distccd(distccd, tmp_path, monkeypatch):
    """The one source no cache can hold is compiled by distccd; a source the
    cache holds is not sent; the kernel passes every check."""
    assert run_command("make kernel BOARD=virt64").returncode == 0
    assert run_command("rm build/virt64/linux/kernel/fork.o").returncode == 0
    port, log = distccd
    build = random.SystemRandom().randrange(10**8, 10**9)
    monkeypatch.setenv("DISTCC_HOSTS", f"127.0.0.1:{port}/2")
    # Fail rather than compile here when the server does not answer.
    monkeypatch.setenv("DISTCC_FALLBACK", "0")
    result = run_command(f"make run BOARD=virt64 CC_WRAPPER=distcc KBUILD_BUILD_VERSION={build}")
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    assert 'CCACHE_PREFIX="distcc" make' in result.stdout
    assert re.search(r" checks passed, 0 failed", result.stdout)
    version = (OUT / "linux" / "include" / "generated" / "utsversion.h").read_text()
    assert f'#define UTS_VERSION "#{build} ' in version
    assert (OUT / "linux" / NEW_SOURCE).with_suffix(".o").exists()
    assert (OUT / "linux" / CACHED_SOURCE).with_suffix(".o").exists()
    sources = compiled_on_server(log)
    assert any(s.endswith(NEW_SOURCE) for s in sources), why_nothing_came(sources, log)
    assert not any(s.endswith(CACHED_SOURCE) for s in sources), sources
