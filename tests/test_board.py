"""Board folders and config fragment checks."""

import os
import shutil

import pytest

from conftest import DEFAULT_KERNEL, ROOT, make, run_fwembed
from fwembedlib.board import load_board
from fwembedlib.errors import FwembedError
from fwembedlib.kconfig import check_fragments, merge_fragments
from fwharness.qemu import qemu_command

VERSATILE = ROOT / "boards" / "versatile"
BOARDS = sorted(p for p in (ROOT / "boards").iterdir() if p.is_dir())


@pytest.fixture
def board(tmp_path):
    folder = tmp_path / "myboard"
    shutil.copytree(VERSATILE, folder)
    return folder


def test_versatile_board_loads():
    """The shipped board folder is complete and its QEMU command expands."""
    board = load_board(VERSATILE)
    cmd = qemu_command(board, "/k/zImage", "/k/pb.dtb")
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
    assert "defconfig = allnoconfig\n" in result.stdout


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


@pytest.mark.parametrize("folder", BOARDS, ids=lambda p: p.name)
def test_every_shipped_board_loads(folder):
    """Each board folder in boards/ passes the checks 'make' runs first."""
    result = run_fwembed("board", folder)
    assert result.returncode == 0, result.stderr
    assert "description = " in result.stdout


def test_boards_are_found_without_a_list():
    """The board tests take every folder in boards/: the five shipped ones at least."""
    assert {"versatile", "vexpress-a9", "virt-uboot", "virt64", "x86_64"} <= {p.name for p in BOARDS}


def edit_cfg(board, old, new):
    cfg = board / "board.cfg"
    text = cfg.read_text()
    assert old in text
    cfg.write_text(text.replace(old, new))
    return cfg


def test_unknown_boot_method_is_named(board):
    """boot = must be kernel or uboot."""
    cfg = edit_cfg(board, "timeout = 120", "timeout = 120\nboot = pxe")
    result = run_fwembed("board", board)
    assert result.returncode == 1
    assert result.stderr == f"{cfg}: error: boot 'pxe' is not one of kernel, uboot\n"


def test_uboot_board_without_uboot_binary_names_the_keys(board):
    """A U-Boot board needs the U-Boot binary and the kernel load address."""
    cfg = edit_cfg(board, "kernel_load = 0x00008000", "boot = uboot")
    result = run_fwembed("board", board)
    assert result.returncode == 1
    assert result.stderr == (f"{cfg}: error: board settings lack uboot, kernel_load, "
                             "which boot = uboot needs\n")


def test_uboot_board_qemu_command_needs_disk(board):
    """A U-Boot board's QEMU command must take the U-Boot binary and the disk."""
    cfg = edit_cfg(board, "timeout = 120", "timeout = 120\nboot = uboot\nuboot = /u-boot.bin")
    result = run_fwembed("board", board)
    assert result.returncode == 1
    assert result.stderr == (f"{cfg}: error: qemu command lacks {{uboot}}, {{disk}}, which "
                             "boot = uboot needs\n")


def test_bad_kernel_load_is_named(board):
    """kernel_load must be an address."""
    cfg = edit_cfg(board, "kernel_load = 0x00008000", "kernel_load = 32k")
    result = run_fwembed("board", board)
    assert result.returncode == 1
    assert result.stderr == (f"{cfg}: error: kernel_load '32k' is not an address such as "
                             "0x00008000\n")


def test_make_names_a_malformed_board_folder(tmp_path):
    """make run with a board folder that lacks a file stops before any build."""
    folder = tmp_path / "half-board"
    folder.mkdir()
    (folder / "board.cfg").write_text("description = half\n")
    result = make("board-check", f"BOARD={folder}")
    assert result.returncode != 0
    assert f"{folder}: error: board folder lacks kernel.config, firmware.list" in result.stderr


@pytest.fixture
def board_vars(board):
    """BOARD_<name> as the real Makefile sees them, through its board.mk include."""
    out_name = f"test-board-vars-{os.getpid()}"
    printer = board.parent / "print.mk"
    printer.write_text("print-%:\n\t@printf '%s\\n' '$($*)'\n")

    def read(*names, kernel=DEFAULT_KERNEL):
        result = make("-f", "Makefile", "-f", printer, f"BOARD={board}", f"KERNEL={kernel}",
                      f"OUT_NAME={out_name}-{kernel}",
                      *[f"print-BOARD_{name}" for name in names])
        assert result.returncode == 0, result.stderr
        return result.stdout.splitlines()
    yield read
    for folder in (ROOT / "build").glob(f"{out_name}-*"):
        shutil.rmtree(folder, ignore_errors=True)


def test_make_vars_name_every_key(board, tmp_path):
    """--make-vars writes BOARD_<KEY> for every key; unset ones empty, boot defaulted."""
    result = run_fwembed("board", board, "--make-vars", tmp_path / "board.mk")
    assert (result.returncode, result.stdout) == (0, "")
    text = (tmp_path / "board.mk").read_text()
    assert "BOARD_CROSS_COMPILE := arm-linux-gnueabi-\n" in text
    assert "BOARD_BOOT := kernel\n" in text and "BOARD_UBOOT := \n" in text


def test_make_reads_the_values_back_verbatim(board, board_vars):
    """'$', '#', quotes and a trailing backslash reach make as board.cfg spells them."""
    value = 'costs $5 # not a comment {kernel} "q" \\'
    edit_cfg(board, "description = ARM Versatile PB (ARM926EJ-S), qemu-system-arm -M versatilepb",
             f"description = {value}")
    assert board_vars("DESCRIPTION", "ARCH") == [value, "arm"]


def test_indented_setting_is_read_alike_by_python_and_make(board, board_vars):
    """Blanks before a key are ignored, by fwembed board and by make, which reads its output."""
    edit_cfg(board, "defconfig = allnoconfig", "   defconfig = indented_defconfig")
    assert load_board(board).settings["defconfig"] == "indented_defconfig"
    assert board_vars("DEFCONFIG") == ["indented_defconfig"]


def test_make_remakes_board_mk_when_board_cfg_changes(board, board_vars):
    """A changed board.cfg reaches make at once: board.mk depends on it."""
    assert board_vars("TIMEOUT") == ["120"]
    cfg = edit_cfg(board, "timeout = 120", "timeout = 99")
    os.utime(cfg, (cfg.stat().st_mtime + 10,) * 2)
    assert board_vars("TIMEOUT") == ["99"]


def test_setting_for_one_kernel_replaces_the_key_for_that_kernel_only(board):
    """dtb[6.12] = ... is the dtb of Linux 6.12; other kernels keep dtb."""
    cfg = board / "board.cfg"
    cfg.write_text(cfg.read_text() + "dtb[9.9] = arch/arm/boot/dts/arm/versatile-pb.dtb\n")
    assert load_board(board, "9.9").settings["dtb"] == "arch/arm/boot/dts/arm/versatile-pb.dtb"
    assert load_board(board, "6.1").settings["dtb"] == "arch/arm/boot/dts/versatile-pb.dtb"
    assert load_board(board).settings["dtb"] == "arch/arm/boot/dts/versatile-pb.dtb"


def test_make_reads_the_setting_of_its_kernel(board, board_vars):
    """make KERNEL=VERSION reads KEY[VERSION] into BOARD_KEY."""
    cfg = board / "board.cfg"
    cfg.write_text(cfg.read_text() + "description[6.12] = the 6.12 one\n")
    assert board_vars("DESCRIPTION", kernel="6.12") == ["the 6.12 one"]
    assert board_vars("DESCRIPTION", kernel=DEFAULT_KERNEL) != ["the 6.12 one"]


@pytest.mark.parametrize("line, message", [
    ("dtb[6] = x", r"board.cfg:1: error: dtb\[6\]: expected a kernel version such as 6.12"),
    ("dtbs[6.12] = x", r"board.cfg:1: error: unknown board setting 'dtbs'"),
])
def test_bad_kernel_setting_has_line(board, line, message):
    """A setting for a kernel needs a known key and a MAJOR.MINOR version."""
    cfg = board / "board.cfg"
    cfg.write_text(line + "\n" + cfg.read_text())
    with pytest.raises(FwembedError, match=message):
        load_board(board)


def test_setting_for_one_kernel_given_twice_is_an_error(board):
    """Two timeout[6.12] lines are refused, naming the second."""
    cfg = board / "board.cfg"
    lines = len(cfg.read_text().splitlines())
    cfg.write_text(cfg.read_text() + "timeout[6.12] = 1\ntimeout[6.12] = 2\n")
    with pytest.raises(FwembedError, match=rf"board.cfg:{lines + 2}: error: board setting "
                                           r"'timeout\[6.12\]' given twice"):
        load_board(board)
