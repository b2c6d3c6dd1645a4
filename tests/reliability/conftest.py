import pytest

from planner.cli import run

TOPOLOGY = """\
cluster: t
brokers:
  - {id: 1, rack: a}
  - {id: 2, rack: b}
  - {id: 3, rack: c}
  - {id: 4, rack: a}
  - {id: 5, rack: b}
  - {id: 6, rack: c}
topics:
  - name: foo
    configs: {min.insync.replicas: "2"}
    assignment: {0: [1, 2, 3], 1: [2, 3, 1], 2: [3, 1, 2], 3: [1, 2, 3]}
    sizes: {0: 1000, 1: 2000, 2: 3000, 3: 4000}
  - name: bar
    assignment: {0: [1, 2], 1: [2, 3]}
"""


@pytest.fixture
def topo(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text(TOPOLOGY)
    return str(path)


@pytest.fixture
def cli(capsys):
    """Run the CLI in this process: (exit code, stdout, stderr)."""

    def call(*args):
        try:
            run(list(args))
        except SystemExit as exc:
            code = exc.code
        else:
            code = 0
        out, err = capsys.readouterr()
        return code, out, err

    return call
