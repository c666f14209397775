"""The sample firmware is exactly what firmware/make-samples writes."""

import subprocess

from conftest import PYTHON, ROOT, snapshot


def test_committed_samples_match_the_generator(tmp_path):
    """Regenerating the samples gives the committed bytes."""
    subprocess.run([PYTHON, ROOT / "firmware" / "make-samples", tmp_path], check=True,
                   capture_output=True)
    made = {k: v[0] for k, v in snapshot(tmp_path).items()}
    committed = {p.name: p.read_bytes() for p in (ROOT / "firmware").iterdir()
                 if p.name in made}
    assert made == committed and len(made) == 7
