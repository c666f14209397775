"""Board folders and config fragment checks."""

import shutil

import pytest

from conftest import ROOT, run_fwembed
from fwembedlib.board import load_board
from fwembedlib.errors import FwembedError
from fwembedlib.kconfig import check_fragments, merge_fragments

VERSATILE = ROOT / "boards" / "versatile"


@pytest.fixture
def board(tmp_path):
    folder = tmp_path / "myboard"
    shutil.copytree(VERSATILE, folder)
    return folder


def test_versatile_board_loads():
    """The shipped board folder is complete and its QEMU command expands."""
    board = load_board(VERSATILE)
    cmd = board.qemu_command("/k/zImage", "/k/pb.dtb")
    assert cmd[0] == "qemu-system-arm" and "-no-reboot" in cmd
    assert cmd[cmd.index("-append") + 1] == "console=ttyAMA0 panic=-1"


def test_missing_file_names_folder_and_file(board):
    """A board folder without its firmware list says so."""
    (board / "firmware.list").unlink()
    result = run_fwembed("board", board)
    assert result.returncode == 1
    assert result.stderr == f"{board}: error: board folder lacks firmware.list\n"


def test_missing_setting_names_it(board):
    """A board.cfg without a required key names the key."""
    cfg = board / "board.cfg"
    cfg.write_text("\n".join(l for l in cfg.read_text().splitlines()
                             if not l.startswith("qemu")) + "\n")
    with pytest.raises(FwembedError, match=r"board.cfg: error: board settings lack qemu"):
        load_board(board)


def test_unknown_setting_has_line(board):
    """A misspelt key is reported with its line."""
    cfg = board / "board.cfg"
    cfg.write_text("timeuot = 3\n" + cfg.read_text())
    with pytest.raises(FwembedError, match=r"board.cfg:1: error: unknown board setting"):
        load_board(board)


def test_board_prints_settings(board):
    """fwembed board prints the checked settings."""
    result = run_fwembed("board", board)
    assert "defconfig = versatile_defconfig\n" in result.stdout


def test_dropped_options_are_named(tmp_path):
    """An option olddefconfig dropped is listed with the fragment line."""
    frag = tmp_path / "frag"
    frag.write_text("CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_C=\"x\"\n")
    dotconfig = tmp_path / ".config"
    dotconfig.write_text("CONFIG_A=y\nCONFIG_C=\"y\"\n")
    with pytest.raises(FwembedError) as err:
        check_fragments([frag], dotconfig)
    assert f"{frag}:3: CONFIG_C: wanted \"x\", got \"y\"" in str(err.value)
    assert "CONFIG_B" not in str(err.value)


def test_surviving_fragment_passes(tmp_path):
    """A fragment fully honoured by .config passes."""
    frag = tmp_path / "frag"
    frag.write_text("CONFIG_A=y\n# CONFIG_B is not set\n")
    dotconfig = tmp_path / ".config"
    dotconfig.write_text("CONFIG_A=y\n# CONFIG_B is not set\n")
    check_fragments([frag], dotconfig)


def test_merge_replaces_overridden_lines(tmp_path):
    """Merging drops the .config lines a fragment overrides, then appends it."""
    frag = tmp_path / "frag"
    frag.write_text("CONFIG_A=y\n# CONFIG_B is not set\n")
    dotconfig = tmp_path / ".config"
    dotconfig.write_text("# CONFIG_A is not set\nCONFIG_B=y\nCONFIG_C=y\n")
    merge_fragments([frag], dotconfig)
    assert dotconfig.read_text() == "CONFIG_C=y\nCONFIG_A=y\n# CONFIG_B is not set\n"
