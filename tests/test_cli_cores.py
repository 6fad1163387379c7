"""A kernel run from the command line uses every AI core of its chip unless --cores says otherwise."""

import json

from dsasim.cli import main as cli


def _cores(capsys, *argv: str) -> int:
    assert cli(["run", "add", "--shape", "256x1024", "--timing-only", "--json", *argv]) == 0
    return json.loads(capsys.readouterr().out)["schedule"]["cores"]


def test_default_is_the_whole_chip_and_cores_overrides(capsys):
    assert _cores(capsys, "--chip", "ascend910b-like") == 24
    assert _cores(capsys, "--chip", "ascend910b-like", "--cores", "4") == 4
    assert _cores(capsys) == 1  # edu has one core
