"""The commands the docs show: every fenced sh block of README.md and docs/*.md.

An HTML comment on the line before each sh block says how it is tested
(docs/testing.md, "The docs are tested"):

    <!-- doc-test: quick -->            tests/test_docs.py runs it
    <!-- doc-test: tests -->            a test runs each command (run_command)
    <!-- doc-test: script TEST -->      TEST runs the whole block (doc_script)
    <!-- doc-test: never: REASON -->    not run, for REASON
"""

import dataclasses
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
FENCE_RE = re.compile(r"^\s*```(\w*)\s*$")
MARK_RE = re.compile(r"^\s*<!-- doc-test: (quick|tests|script (\S+)|never: (.+)) -->\s*$")


@dataclasses.dataclass
class Block:
    page: pathlib.Path
    line: int
    lang: str
    mark: str
    script_test: str
    text: str

    @property
    def where(self):
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    @property
    def commands(self):
        """The block's command lines: continuations joined, comments and blanks dropped."""
        joined = re.sub(r"\\\n\s*", "", self.text)
        return [line.strip() for line in joined.splitlines()
                if line.strip() and not line.strip().startswith("#")]


def blocks(pages=None):
    """Every fenced block of the pages, with the doc-test mark before it."""
    found = []
    for page in pages or PAGES:
        lines = page.read_text().splitlines()
        i = 0
        while i < len(lines):
            fence = FENCE_RE.match(lines[i])
            if not fence:
                i += 1
                continue
            end = i + 1
            while not FENCE_RE.match(lines[end]):
                end += 1
            mark = MARK_RE.match(lines[i - 1]) if i else None
            found.append(Block(page, i + 1, fence.group(1),
                               mark.group(1).split(":")[0].split()[0] if mark else None,
                               mark.group(2) if mark else None,
                               "\n".join(line.strip() for line in lines[i + 1:end]) + "\n"))
            i = end + 1
    return found


def sh_blocks(mark=None):
    return [b for b in blocks() if b.lang == "sh" and (mark is None or b.mark == mark)]


def doc_script(page_name):
    """The text of the one 'doc-test: script' block of docs/PAGE_NAME."""
    found = [b for b in sh_blocks("script") if b.page.name == page_name]
    assert len(found) == 1, f"{page_name}: expected one doc-test script block"
    return found[0].text
