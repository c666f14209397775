"""The layout rules of docs/architecture.md, checked on the source.

The product (tools/fwembed, tools/fwembedlib) never imports the harness
(harness/) or anything outside the Python standard library, except
pyelftools for reading ELF files in report; 'fwembed gen' runs on the
standard library alone.
"""

import ast
import subprocess
import sys

import pytest

from conftest import FWEMBED, TOOLS, write_list

PRODUCT = sorted((TOOLS / "fwembedlib").glob("*.py")) + [FWEMBED]
# Outside the standard library, the product may import these, in these files only.
ALLOWED = {"elftools": {"elf.py"}, "libfdt": {"kimage.py"}}


def imports(path):
    """(top-level module, line) of every absolute import in a Python file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(alias.name.split(".")[0], node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            found.append((node.module.split(".")[0], node.lineno))
    return found


@pytest.mark.parametrize("path", PRODUCT, ids=lambda p: p.name)
def test_product_imports_only_itself_and_the_standard_library(path):
    """A product module imports fwembedlib and the standard library, never the harness."""
    for module, line in imports(path):
        allowed = module == "fwembedlib" or module in sys.stdlib_module_names or \
            path.name in ALLOWED.get(module, ())
        assert allowed, f"{path}:{line}: imports {module}"


def test_gen_runs_without_site_packages(fwtree, tmp_path):
    """fwembed gen works with python3 -S -I: no Debian or pip module is needed."""
    path = write_list(fwtree, "a one.bin\nb ramp.bin compress=xz\nc seven.bin compress=zstd\n")
    result = subprocess.run(["/usr/bin/python3", "-S", "-I", FWEMBED, "gen", "-q", "--list",
                             path, "--out", tmp_path / "out"], capture_output=True, text=True,
                            check=False)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out" / "manifest.json").is_file()


def test_report_without_pyelftools_says_which_package(fwtree, tmp_path):
    """report on ELF files, where pyelftools is missing, names the Debian package."""
    path = write_list(fwtree, "a one.bin\n")
    subprocess.run(["/usr/bin/python3", FWEMBED, "gen", "-q", "--list", path, "--out",
                    tmp_path / "out"], check=True)
    result = subprocess.run(["/usr/bin/python3", "-S", "-I", FWEMBED, "report", "--manifest",
                             tmp_path / "out" / "manifest.json", "--vmlinux", "/usr/bin/python3",
                             "--base-vmlinux", "/usr/bin/python3"],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 1
    assert result.stderr == ("fwembed: error: reading ELF files needs pyelftools: "
                             "apt-get install python3-pyelftools\n")



def test_ls_of_a_fit_without_libfdt_says_which_package(tmp_path):
    """ls on a FIT, where libfdt is missing, names the Debian package."""
    fit = tmp_path / "image.fit"
    # The smallest flattened device tree header: magic, then totalsize.
    fit.write_bytes(bytes.fromhex("d00dfeed") + (40).to_bytes(4, "big") + bytes(32))
    result = subprocess.run(["/usr/bin/python3", "-S", "-I", FWEMBED, "ls", fit],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 1
    assert result.stderr == ("fwembed: error: reading a FIT needs libfdt: "
                             "apt-get install python3-libfdt\n")
