"""Property: any valid set of names and contents round-trips through the image.

Hypothesis draws names (printable ASCII without '"' or '\\', as relative
paths) and contents; the generator's output is assembled and linked with
the real cross toolchain, and every entry is read back from the ELF file.
"""

import json
import string
import tempfile
import pathlib

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from asmlink import assemble_and_link, read_table
from conftest import run_fwembed
from fwembedlib.names import name_problem

COMPONENT_CHARS = "".join(c for c in string.printable
                          if " " <= c <= "~" and c not in '"\\/')
component = st.text(COMPONENT_CHARS, min_size=1, max_size=12).filter(
    lambda c: c not in (".", ".."))
name = st.lists(component, min_size=1, max_size=3).map("/".join).filter(
    lambda n: name_problem(n) is None)
entries = st.dictionaries(name, st.binary(max_size=300), min_size=1, max_size=6)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(entries)
def test_names_and_contents_round_trip(files):
    """Whatever valid names and bytes go in come back out of the linked image."""
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        src = tmp / "src"
        src.mkdir()
        lines = []
        for i, (fw_name, data) in enumerate(sorted(files.items())):
            (src / f"f{i}.bin").write_bytes(data)
            lines.append(f'"{fw_name}" f{i}.bin\n')
        (src / "firmware.list").write_text("".join(lines))
        result = run_fwembed("gen", "-q", "--list", src / "firmware.list", "--out", tmp / "out")
        assert result.returncode == 0, result.stderr
        table = read_table(assemble_and_link(tmp / "out", tmp))
        assert [row[0] for row in table] == sorted(files, key=str.encode)
        for fw_name, data, size, stored, _, _ in table:
            assert data == files[fw_name] and size == stored == len(data)
        manifest = json.loads((tmp / "out" / "manifest.json").read_text())["entries"]
        assert [e["name"] for e in manifest] == [row[0] for row in table]
