"""docs/own-kernel.md, run as written: the series applied with git am to a
clean Linux 6.1 git tree, the table generated, the options set, the kernel built.

The script runs with HOME set to build/own-kernel, laid out as the page
assumes: ~/src/linux is a fresh git tree of Debian's linux-source-6.1, and
~/src/fwembed this repository. A compiler wrapper that calls ccache
comes first in PATH, so that a second run builds from the cache, and an nm
that loads GCC's plugin only, as the Makefile's NM does; the script itself
does not know about them.
"""

import pathlib
import shutil
import subprocess

import pytest

from conftest import ROOT, build_group, command_env
from doccmds import doc_script

pytestmark = [pytest.mark.kernel, build_group("own-kernel")]
HOME = ROOT / "build" / "own-kernel"
TARBALL = "/usr/src/linux-source-6.1.tar.xz"
# The compiler the page builds with, wrapped to call ccache.
COMPILER = "gcc"


def sh(cmd, cwd):
    result = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
    assert result.returncode == 0, f"{cmd}\n{result.stderr}"
    return result.stdout


@pytest.fixture(scope="module")
def home():
    """A home folder as the page assumes, with a clean 6.1 tree committed in git."""
    shutil.rmtree(HOME, ignore_errors=True)
    linux = HOME / "src" / "linux"
    linux.mkdir(parents=True)
    sh(["tar", "-C", linux, "--strip-components=1", "-xf", TARBALL], HOME)
    git = ["git", "-c", "user.name=fwembed test", "-c", "user.email=test@fwembed.invalid"]
    for cmd in (["git", "init", "-q"], ["git", "add", "-f", "-A"],
                git + ["commit", "-q", "-m", "Linux 6.1"]):
        sh(cmd, linux)
    (HOME / "src" / "fwembed").symlink_to(ROOT)
    bindir = HOME / "bin"
    bindir.mkdir()
    if shutil.which("ccache"):
        wrapper = bindir / COMPILER
        wrapper.write_text(f'#!/bin/sh\nexec ccache /usr/bin/{COMPILER} "$@"\n')
        wrapper.chmod(0o755)
    # nm with GCC's plugin only, as gcc-nm runs it (the Makefile's NM): not
    # also the LLVM plugin that clang installs, which cost 87 ms a call, and
    # 6.1 calls nm on every object it compiles.
    plugin = subprocess.run([COMPILER, "-print-file-name=liblto_plugin.so"], capture_output=True,
                            text=True, check=True).stdout.strip()
    if pathlib.Path(plugin).is_absolute():
        nm = bindir / "nm"
        nm.write_text(f'#!/bin/sh\nexec /usr/bin/nm --plugin {plugin} "$@"\n')
        nm.chmod(0o755)
    return HOME


def test_own_kernel_page_builds_the_firmware_in(home):
    """The page's script, run as it is, links a data symbol per source and encoding."""
    env = command_env()
    if shutil.which("ccache"):
        cache = subprocess.run(["ccache", "-k", "cache_dir"], capture_output=True, text=True,
                               check=True).stdout.strip()
        env.update(CCACHE_DIR=cache, CCACHE_BASEDIR=str(home))
    env.update(HOME=str(home), PATH=f"{home / 'bin'}:{env['PATH']}",
               GIT_COMMITTER_NAME="fwembed test", GIT_COMMITTER_EMAIL="test@fwembed.invalid")
    result = subprocess.run(["bash", "-e", "-c", doc_script("own-kernel.md")], cwd=home,
                            env=env, capture_output=True, text=True, timeout=3600, check=False)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    fw = home / "build" / "myboard" / "fw"
    symbols = sum(p.read_text().count(".globl fwembed_data_") for p in fw.glob("data-*.S"))
    assert symbols > 0 and result.stdout.splitlines()[-1] == str(symbols)
    config = (home / "build" / "myboard" / "linux" / ".config").read_text()
    assert 'CONFIG_FW_LOADER_GENERATED_DIR="../fw"' in config
    log = sh(["git", "log", "--format=%s"], home / "src" / "linux").splitlines()
    series = (ROOT / "kernel-patch" / "6.1" / "series").read_text().split()
    assert len(log) == len(series) + 1 and log[-1] == "Linux 6.1"
