"""Shared fixtures: paths, a runner for the fwembed CLI, tiny firmware trees."""

import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
TOOLS = ROOT / "tools"
FWEMBED = TOOLS / "fwembed"
HARNESS = ROOT / "harness" / "fwembed-harness"
PYTHON = "/usr/bin/python3"
sys.path[:0] = [str(TOOLS), str(ROOT / "harness")]


def run_fwembed(*args, cwd=None):
    """Run the product's real command line; return the CompletedProcess."""
    return subprocess.run([PYTHON, str(FWEMBED), *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, check=False)


def run_harness(*args, timeout=None):
    """Run the harness's command line; return the CompletedProcess."""
    return subprocess.run([PYTHON, str(HARNESS), *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, check=False)


@pytest.fixture
def fwtree(tmp_path):
    """A folder with tiny firmware files and a helper to write a list."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "empty.bin").write_bytes(b"")
    (src / "one.bin").write_bytes(b"\x01")
    (src / "seven.bin").write_bytes(b"1234567")
    (src / "ramp.bin").write_bytes(bytes(range(256)))
    return src


def write_list(folder, text, name="firmware.list"):
    path = folder / name
    path.write_text(text)
    return path


def snapshot(folder):
    """{relative path: (bytes, mtime_ns)} of every file below folder."""
    folder = pathlib.Path(folder)
    if not folder.exists():
        return None
    return {p.relative_to(folder).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file()}


def make_env(**settings):
    """The environment for a make of its own: not a sub-make of 'make check'
    (whose MAKEFLAGS would leak in, and whose MAKELEVEL would make it print
    'Entering directory' lines), nor given the settings that only make check
    reads, which make puts in its commands' environment when its command
    line sets them ('make check CHECK_WORKERS=0')."""
    env = dict(os.environ, **settings)
    for name in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "CHECK_KERNELS", "CHECK_WORKERS"):
        if name not in settings:
            env.pop(name, None)
    return env


def make(*args, cwd=ROOT, timeout=3600, **settings):
    """Run make in the repository and return the CompletedProcess; ``settings``
    are added to its environment.

    Tests install nothing: 'make check' installed every package up front,
    and INSTALL_DEPS=no makes a missing one an error instead.
    """
    return subprocess.run(["make", "INSTALL_DEPS=no", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, env=make_env(**settings), check=False)


def command_env():
    """The environment documented commands run in: make installs nothing (as
    in make()), and python3 is Debian's, as on the Debian 12 host the docs
    assume (tools/fwembed starts with '#!/usr/bin/env python3')."""
    return make_env(INSTALL_DEPS="no", PATH="/usr/bin:" + os.environ["PATH"])


def run_command(text, cwd=ROOT, timeout=3600):
    """Run one command line exactly as README.md or docs/ show it, with bash,
    from the top of the repository. tests/test_docs.py checks that every
    documented command is run so, and that these are documented."""
    return subprocess.run(["bash", "-e", "-c", text], cwd=cwd, env=command_env(),
                          capture_output=True, text=True, timeout=timeout, check=False)


# The kernels that kernel-patch/ holds a series for, and make's default.
KERNELS = sorted((p.parent.name for p in (ROOT / "kernel-patch").glob("*/series")),
                 key=lambda v: tuple(map(int, v.split("."))))
DEFAULT_KERNEL = "6.1"
# make check's CHECK_KERNELS: the kernels that every board boots on and whose
# series test_series builds patch by patch.
CHECK_KERNELS = [k for k in os.environ.get("FWEMBED_CHECK_KERNELS", DEFAULT_KERNEL).split()
                 if k in KERNELS]


def prepare_tree(kernel=DEFAULT_KERNEL):
    """The prepared (extracted and patched) tree of one kernel, as make run uses it."""
    result = make("tree", f"KERNEL={kernel}")
    assert result.returncode == 0, result.stdout + result.stderr
    return ROOT / "build" / f"linux-{kernel}"


@pytest.fixture(scope="session")
def kernel_tree():
    """The prepared tree of the default kernel."""
    return prepare_tree()


# make check runs the tests on two pytest-xdist workers (--dist loadgroup), so
# that one can boot QEMU, which keeps one core busy, while the other builds.
# Tests that build, boot or read one build folder must not run at once, and a
# later test may use what an earlier one built there, or the objects ccache
# kept from it: such tests carry the folder's group, and xdist runs a group on
# one worker, in the order collected. A test without a group uses only its
# own files, or the kernel trees, which scripts/prepare-kernel makes under a
# lock.
def out_name(board, kernel=DEFAULT_KERNEL):
    """make's build folder name for the board on the kernel: build/<board>,
    build/<board>-<kernel> on another kernel than the default."""
    return board if kernel == DEFAULT_KERNEL else f"{board}-{kernel}"


def build_group(board, kernel=DEFAULT_KERNEL):
    """The xdist group of the tests that share the board's build folder."""
    return pytest.mark.xdist_group(out_name(board, kernel))


def on_board(board):
    """A parameter naming a board, in that board's build group."""
    return pytest.param(board, marks=build_group(board), id=board)


# Groups in the order workers start them, the longest first, so that the two
# longest run side by side and the quick tests fill the gaps at the end. In a
# run of make check on two workers (fresh clone, ccache warm), the tests of
# x86_64's group took 2,157 s (the series patch by patch, and a reproducible
# build that is now a rebuild in virt64's group) and versatile's 1,960 s
# (about twenty boots and make kselftest's unpatched build); virt64's 687 s,
# own-kernel's 404 s, each other under 240 s.
# With 6.12 in CHECK_KERNELS, x86_64-6.12's group builds the 6.12 series and
# the x86_64 board on 6.12: 2,654 s in make check CHECK_KERNELS="6.1 6.12"
# (fresh clone, 6.12's objects mostly not yet in ccache), against 1,851 s for
# x86_64's and 1,417 s for versatile's; vexpress-a9-6.12's took 590 s. Both
# 6.12 groups now start among the longest. In this order, at 7c58dd8 (fresh
# clone, ccache warm), the tests' times added up to 5,723 s (x86_64-6.12's
# group 1,667 s, x86_64's 1,468 s, versatile's 1,145 s) and the run took
# 2,866 s by pytest's summary: both workers were busy to the end.
LONGEST_GROUPS_FIRST = ("x86_64-6.12", "x86_64", "versatile", "vexpress-a9-6.12", "virt64",
                        "own-kernel", "virt-uboot", "vexpress-a9", "virt64-6.12")


def group_rank(item):
    """LONGEST_GROUPS_FIRST's place of the test's group; other groups after
    those, tests without one last."""
    mark = item.get_closest_marker("xdist_group")
    if mark is None:
        return len(LONGEST_GROUPS_FIRST) + 1
    group = mark.args[0]
    return LONGEST_GROUPS_FIRST.index(group) if group in LONGEST_GROUPS_FIRST \
        else len(LONGEST_GROUPS_FIRST)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    """Order the tests by group_rank(); a stable sort keeps each group's own
    order. xdist hands a worker the next group in this order when it is idle."""
    items.sort(key=group_rank)
