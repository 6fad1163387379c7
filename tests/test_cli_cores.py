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


def _run(capsys, *argv: str) -> tuple[int, dict | str]:
    code = cli([*argv, "--chip", "ascend910b-like"])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if "--json" in argv and code == 0 else err)


def test_without_cores_an_operator_with_few_tiles_spreads_over_fewer(capsys):
    # 16³ has one m,n tile and a 5-row layernorm five rows: not "cores=24, but ... only 1 tile"
    for shape_args, most in ((("matmul", "--shape", "16x16x16"), 1), (("layernorm", "--shape", "5x64"), 5)):
        code, out = _run(capsys, "run", *shape_args, "--timing-only", "--json")
        assert code == 0, out
        assert 1 <= out["schedule"]["cores"] <= most
    code, err = _run(capsys, "run", "matmul", "--shape", "16x16x16", "--timing-only", "--cores", "4")
    assert code == 2 and "cores=4, but the parallel axes m,n have only 1 tile" in err  # asked for: refused
    assert cli(["compile", "matmul", "--shape", "16x16x16", "--chip", "ascend910b-like"]) == 0
    assert ".core 1" not in capsys.readouterr().out


def test_a_sweep_without_cores_runs_each_combination_on_the_cores_it_can_use(capsys):
    code = cli(["sweep", "layernorm", "--shape", "5x64", "--chip", "ascend910b-like", "--vary", "tile_r=1,2", "--json"])
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert code == 0 and all(r.get("error") is None for r in rows), rows
