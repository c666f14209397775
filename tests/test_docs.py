"""The docs do not go stale: every command they show is run, and they hold together.

How each sh block is run is said by the doc-test mark before it
(tests/doccmds.py, docs/testing.md).
"""

import ast
import re
import shutil

import pytest

from conftest import ROOT, run_command
from doccmds import PAGES, sh_blocks

TESTS = sorted((ROOT / "tests").glob("*.py"))
# What a scratch copy of the repository leaves out.
NOT_COPIED = shutil.ignore_patterns("build", ".git", "__pycache__", ".hypothesis", "*.pyc")
LINK_RE = re.compile(r"\]\(([^)#\s]+)?(?:#([^)\s]+))?\)")


def run_command_patterns():
    """{regex: test file} for each run_command(...) call in the tests; an
    f-string's fields match any word."""
    patterns = {}
    for path in TESTS:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "run_command" \
                    and node.args:
                arg = node.args[0]
                if isinstance(arg, ast.Constant):
                    patterns[re.escape(arg.value)] = path.name
                elif isinstance(arg, ast.JoinedStr):
                    patterns["".join(re.escape(v.value) if isinstance(v, ast.Constant)
                                     else r"\S+" for v in arg.values)] = path.name
    return patterns


def test_every_sh_block_says_how_it_is_tested():
    """Each sh block of README.md and docs/ has a doc-test mark before it."""
    unmarked = [b.where for b in sh_blocks() if b.mark is None]
    assert unmarked == []


def test_docs_have_sh_blocks_of_every_kind():
    """The marks are read: quick, tests, script and never blocks are all found."""
    assert {b.mark for b in sh_blocks()} == {"quick", "tests", "script", "never"}


@pytest.mark.parametrize("page", [p for p in PAGES if any(b.page == p
                                                          for b in sh_blocks("quick"))],
                         ids=lambda p: p.name)
def test_quick_commands_run(page, tmp_path):
    """The page's quick commands succeed, in order, in a scratch copy of the repository."""
    copy = tmp_path / "fwembed"
    shutil.copytree(ROOT, copy, ignore=NOT_COPIED, symlinks=True)
    for block in [b for b in sh_blocks("quick") if b.page == page]:
        for command in block.commands:
            result = run_command(command, cwd=copy, timeout=600)
            assert result.returncode == 0, f"{block.where}: {command}\n{result.stdout}" \
                                           f"{result.stderr}"


def test_documented_commands_are_run_by_tests():
    """Each command of a 'doc-test: tests' block is what some test's run_command() runs."""
    patterns = run_command_patterns()
    unrun = [f"{b.where}: {c}" for b in sh_blocks("tests") for c in b.commands
             if not any(re.fullmatch(p, c) for p in patterns)]
    assert unrun == []


def test_commands_tests_run_are_documented():
    """Each run_command() of a test runs a command that the docs show."""
    documented = [c for b in sh_blocks("tests") for c in b.commands]
    undocumented = [f"{test}: {p}" for p, test in run_command_patterns().items()
                    if not any(re.fullmatch(p, c) for c in documented)]
    assert undocumented == []


def test_script_blocks_are_run_by_their_test():
    """A 'doc-test: script TEST' block's test exists and runs that page's script."""
    for block in sh_blocks("script"):
        test = ROOT / block.script_test
        assert test.is_file(), block.where
        assert f'doc_script("{block.page.name}")' in test.read_text(), block.where


def test_the_command_is_spelled_one_way():
    """The docs run fwembed as tools/fwembed, never as 'fwembed' or 'python3 tools/fwembed'."""
    for page in PAGES:
        text = page.read_text()
        assert "python3 tools/fwembed" not in text, page.name
        assert not re.search(r"`fwembed (gen|install|report|import-config|board|cpio|needs|ls|"
                             r"extract|verify)\b", text), \
            page.name
    for block in sh_blocks():
        for command in block.commands:
            assert not command.startswith("fwembed "), f"{block.where}: {command}"


def heading_anchors(page):
    """GitHub's anchors of the page's headings."""
    anchors = set()
    for line in page.read_text().splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            anchors.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return anchors


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_links_lead_somewhere(page):
    """Every relative link names a file that exists, and a heading of it when it has '#'."""
    for target, anchor in LINK_RE.findall(page.read_text()):
        if target.startswith("http"):
            continue
        linked = (page.parent / target) if target else page
        assert linked.exists(), f"{page.name}: link to {target}"
        if anchor:
            assert anchor in heading_anchors(linked), f"{page.name}: {target}#{anchor}"


def test_readme_stays_short():
    """README.md is an overview of about 200 lines; the rest lives in docs/."""
    assert len((ROOT / "README.md").read_text().splitlines()) <= 220


def test_every_docs_page_is_linked_from_the_readme():
    """A newcomer reaches every page of docs/ from README.md."""
    readme = (ROOT / "README.md").read_text()
    assert [p.name for p in PAGES[1:] if f"(docs/{p.name})" not in readme] == []
