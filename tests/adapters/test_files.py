"""planner/adapters/files.read_text: every input file's error texts, one line each."""

import pytest

from planner.adapters.files import read_text
from planner.model import PlannerError


def test_read_text_reads_utf8(tmp_path):
    (tmp_path / "a.json").write_text("caf\u00e9\n", encoding="utf-8")
    assert read_text(str(tmp_path / "a.json"), "--x a.json") == "caf\u00e9\n"


@pytest.mark.parametrize(
    "name, expected",
    [
        ("missing.json", "--x F: no such file"),
        ("folder", "--x F: is a directory, expected a file"),
        ("latin1.txt", "--x F: not UTF-8 text (byte 0xe9 at offset 3); save it as UTF-8"),
        ("plain.txt/inside", "--x F: cannot read: Not a directory"),
    ],
)
def test_read_text_errors(tmp_path, name, expected):
    (tmp_path / "folder").mkdir()
    (tmp_path / "latin1.txt").write_bytes("caf\u00e9".encode("latin-1"))
    (tmp_path / "plain.txt").write_text("x")
    with pytest.raises(PlannerError) as e:
        read_text(str(tmp_path / name), "--x F")
    assert str(e.value) == expected


def test_read_text_names_what_is_missing(tmp_path):
    with pytest.raises(PlannerError) as e:
        read_text(str(tmp_path / "t.yaml"), "t.yaml", missing="no such topology file (see topologies/ for examples)")
    assert str(e.value) == "t.yaml: no such topology file (see topologies/ for examples)"
