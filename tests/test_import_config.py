"""fwembed import-config: CONFIG_EXTRA_FIRMWARE into a firmware list, no silent fallback."""

import hashlib
import json
import pathlib

import pytest

from conftest import run_fwembed
from fwembedlib.fwlist import read_list

LIB = pathlib.Path("/lib/firmware")
NAMES = ["cis/NE2K.cis", "av7110/bootcode.bin", "carl9170-1.fw"]


def write_config(folder, text):
    path = folder / ".config"
    path.write_text("CONFIG_FW_LOADER=y\n" + text)
    return path


def imported(*args):
    result = run_fwembed("import-config", *args)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_debian_firmware_imports_in_config_order(tmp_path):
    """Each name becomes an entry whose source is the absolute path below the directory."""
    config = write_config(tmp_path, f'CONFIG_EXTRA_FIRMWARE="{" ".join(NAMES)}"\n'
                                    f'CONFIG_EXTRA_FIRMWARE_DIR="{LIB}"\n')
    imported(config, "--out", tmp_path / "fw.list")
    entries = read_list(tmp_path / "fw.list")
    assert [(e.name, e.source) for e in entries] == [(n, f"{LIB}/{n}") for n in NAMES]


def test_header_says_where_the_list_came_from(tmp_path):
    """The list starts with comments naming the config and both settings."""
    config = write_config(tmp_path, 'CONFIG_EXTRA_FIRMWARE="carl9170-1.fw"\n'
                                    f'CONFIG_EXTRA_FIRMWARE_DIR="{LIB}"\n')
    header = imported(config).splitlines()[:3]
    assert header == [f"# Firmware list imported by 'fwembed import-config' from {config}:",
                      '#   CONFIG_EXTRA_FIRMWARE="carl9170-1.fw"',
                      f"#   CONFIG_EXTRA_FIRMWARE_DIR (resolved): {LIB}"]


def test_imported_list_generates_the_same_bytes(tmp_path):
    """fwembed gen on the imported list describes exactly the Debian files."""
    config = write_config(tmp_path, f'CONFIG_EXTRA_FIRMWARE="{" ".join(NAMES)}"\n'
                                    f'CONFIG_EXTRA_FIRMWARE_DIR="{LIB}"\n')
    imported(config, "--out", tmp_path / "fw.list")
    gen = run_fwembed("gen", "-q", "--list", tmp_path / "fw.list", "--out", tmp_path / "out")
    assert gen.returncode == 0, gen.stderr
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())["entries"]
    assert {e["name"]: e["sha256"] for e in manifest} == {
        n: hashlib.sha256((LIB / n).read_bytes()).hexdigest() for n in NAMES}


def test_relative_dir_is_below_srctree(tmp_path):
    """A relative CONFIG_EXTRA_FIRMWARE_DIR is taken below --srctree, as Kbuild does."""
    (tmp_path / "linux" / "firmware" / "sub").mkdir(parents=True)
    (tmp_path / "linux" / "firmware" / "sub" / "a.bin").write_bytes(b"a")
    config = write_config(tmp_path, 'CONFIG_EXTRA_FIRMWARE="sub/a.bin"\n'
                                    'CONFIG_EXTRA_FIRMWARE_DIR="firmware"\n')
    text = imported(config, "--srctree", tmp_path / "linux")
    assert text.splitlines()[-1] == f"sub/a.bin  {tmp_path}/linux/firmware/sub/a.bin"


def test_config_string_escapes_are_undone(tmp_path):
    """A directory written with Kconfig's backslash escapes is found."""
    folder = tmp_path / "fw\\dir"
    folder.mkdir()
    (folder / "a.bin").write_bytes(b"a")
    config = write_config(tmp_path, 'CONFIG_EXTRA_FIRMWARE="a.bin"\n'
                                    f'CONFIG_EXTRA_FIRMWARE_DIR="{tmp_path}/fw\\\\dir"\n')
    assert imported(config).splitlines()[-1] == f"a.bin  {folder}/a.bin"


def test_existing_list_is_kept_without_force(tmp_path):
    """--out does not replace an existing file unless --force is given."""
    config = write_config(tmp_path, 'CONFIG_EXTRA_FIRMWARE="carl9170-1.fw"\n'
                                    f'CONFIG_EXTRA_FIRMWARE_DIR="{LIB}"\n')
    (tmp_path / "fw.list").write_text("mine\n")
    result = run_fwembed("import-config", config, "--out", tmp_path / "fw.list")
    assert result.returncode == 1
    assert result.stderr == (f"{tmp_path}/fw.list: error: already exists; "
                             "give --force to replace it\n")
    assert (tmp_path / "fw.list").read_text() == "mine\n"
    imported(config, "--out", tmp_path / "fw.list", "--force")
    assert [e.name for e in read_list(tmp_path / "fw.list")] == ["carl9170-1.fw"]


@pytest.mark.parametrize("text, line, message", [
    ('CONFIG_EXTRA_FIRMWARE="carl9170-1.fw"\n', 2,
     "CONFIG_EXTRA_FIRMWARE_DIR is not set; Linux 6.1 would take the files from the build "
     "host's /lib/firmware"),
    ('CONFIG_EXTRA_FIRMWARE="carl9170-1.fw"\nCONFIG_EXTRA_FIRMWARE_DIR=""\n', 3,
     "CONFIG_EXTRA_FIRMWARE_DIR is empty"),
    ('CONFIG_EXTRA_FIRMWARE="a.bin"\nCONFIG_EXTRA_FIRMWARE_DIR="firmware"\n', 3,
     "CONFIG_EXTRA_FIRMWARE_DIR='firmware' is relative to the kernel source tree: "
     "give --srctree"),
    (f'CONFIG_EXTRA_FIRMWARE="carl9170-1.fw missing.bin"\nCONFIG_EXTRA_FIRMWARE_DIR="{LIB}"\n',
     2, f"CONFIG_EXTRA_FIRMWARE names 'missing.bin', but {LIB}/missing.bin: no such file"),
    (f'CONFIG_EXTRA_FIRMWARE="cis"\nCONFIG_EXTRA_FIRMWARE_DIR="{LIB}"\n',
     2, f"CONFIG_EXTRA_FIRMWARE names 'cis', but {LIB}/cis: not a regular file"),
    ('CONFIG_EXTRA_FIRMWARE="a.bin"\nCONFIG_EXTRA_FIRMWARE_DIR="/nonexistent/fw"\n', 3,
     "CONFIG_EXTRA_FIRMWARE_DIR: /nonexistent/fw: no such directory"),
    (f'CONFIG_EXTRA_FIRMWARE="carl9170-1.fw carl9170-1.fw"\nCONFIG_EXTRA_FIRMWARE_DIR="{LIB}"\n',
     2, "CONFIG_EXTRA_FIRMWARE names 'carl9170-1.fw' twice"),
    (f'CONFIG_EXTRA_FIRMWARE="../etc/passwd"\nCONFIG_EXTRA_FIRMWARE_DIR="{LIB}"\n',
     2, "a '..' path component"),
    ('CONFIG_EXTRA_FIRMWARE=""\n', 2, "CONFIG_EXTRA_FIRMWARE is empty or not set"),
    ("CONFIG_EXTRA_FIRMWARE=carl9170-1.fw\n", 2, "expected a quoted string"),
])
def test_bad_config_is_refused(tmp_path, text, line, message):
    """Exit 1 with 'config:line: error: ...', and no list written."""
    config = write_config(tmp_path, text)
    result = run_fwembed("import-config", config, "--out", tmp_path / "fw.list")
    assert result.returncode == 1
    assert result.stderr.startswith(f"{config}:{line}: error: "), result.stderr
    assert message in result.stderr
    assert not (tmp_path / "fw.list").exists()


def test_config_without_extra_firmware_names_the_file(tmp_path):
    """No CONFIG_EXTRA_FIRMWARE line at all: the error names the config file."""
    config = write_config(tmp_path, "")
    result = run_fwembed("import-config", config)
    assert result.returncode == 1
    assert result.stderr.startswith(f"{config}: error: CONFIG_EXTRA_FIRMWARE is empty")


def test_unreadable_config_is_an_error(tmp_path):
    """A config that does not exist: exit 1, named."""
    result = run_fwembed("import-config", tmp_path / "nope")
    assert result.returncode == 1
    assert result.stderr.startswith(f"{tmp_path}/nope: error: cannot read config")
