"""Tile pictures: which tiles are marked — against closed forms from the schedule, and against the GM
accesses of the program the compiler emitted (decoded from its instructions) — not pixels."""

from __future__ import annotations

import bisect
import builtins
import json
import math
import sys
from pathlib import Path

import pytest
from hypothesis import given, reject

sys.path.append(str(Path(__file__).parent / "compiler"))  # the compiler's hypothesis strategies
from kernel_strategies import CHIP, Case, cases

from compiler import BufferCapacityError, MatMul, Schedule, make_op
from dsasim.api import compile_and_run, compile_op
from dsasim.cli import main as cli
from dsasim.plots import tiles, tiles_data, tiles_widget
from dsasim.plots.tile_moves import gm_accesses
from isa import DsasimError, Space
from simulator import simulate
from simulator.plots.style import DsasimFigure

ROOT = Path(__file__).parent.parent
PNG = b"\x89PNG\r\n\x1a\n"
MM = MatMul(256, 256, 256)
T64 = {"m": 64, "n": 64, "k": 64}


@pytest.fixture(scope="module")
def mnk():
    return compile_op(MM, Schedule(tile=T64, order=("m", "n", "k")))


@pytest.fixture(scope="module")
def mkn():
    return compile_op(MM, Schedule(tile=T64, order=("m", "k", "n"), buffers={"c": 1}))


# ------------------------------------------------------------------------------- closed forms


def test_step_view_order_mnk(mnk):
    """k innermost: a and b change every step, c's tile is written after its last k step."""
    for t in range(64):
        mo, no, ko = t // 16, t // 4 % 4, t % 4
        d = tiles_data(mnk, step=t)
        assert d.loop_index == {"mo": mo, "no": no, "ko": ko}
        assert d.marked("a", "load") == {(mo, ko)} and not d.marked("a", "reuse")
        assert d.marked("b", "load") == {(ko, no)}
        assert d.marked("c", "store" if ko == 3 else "compute") == {(mo, no)}
        assert d.marked("c", "done") == {(i // 4, i % 4) for i in range(4 * mo + no)}
        assert not d.marked("c", "pending")
        earlier_a = {(mo2, ko2) for s in range(t) for mo2, ko2 in [(s // 16, s % 4)]} - {(mo, ko)}
        assert d.marked("a", "done") == earlier_a


def test_step_view_order_mkn(mkn):
    """n innermost: a stays on chip across the n loop; c's tiles accumulate until the k loop ends."""
    for t in range(64):
        mo, ko, no = t // 16, t // 4 % 4, t % 4
        d = tiles_data(mkn, step=t)
        assert d.marked("a", "load" if no == 0 else "reuse") == {(mo, ko)}
        assert d.marked("b", "load") == {(ko, no)}
        if (ko, no) == (3, 3):  # the write-back loop after the k loop: all of the block's c tiles
            assert d.marked("c", "store") == {(mo, j) for j in range(4)}
            assert not d.marked("c", "pending") and not d.marked("c", "compute")
        else:
            assert d.marked("c", "compute") == {(mo, no)}
            earlier = set(range(4)) if ko > 0 else set(range(no))
            assert d.marked("c", "pending") == {(mo, j) for j in earlier - {no}}
        assert d.marked("c", "done") == {(i, j) for i in range(mo) for j in range(4)}


@pytest.mark.parametrize(("order", "a_each", "b_each"), [("mnk", 4, 4), ("mkn", 1, 4), ("nkm", 4, 1)])
def test_core_view_counts_reloads_as_the_traffic_formula(order, a_each, b_each):
    """Order m,n,k re-reads a for every n tile and b for every m tile; m,k,n keeps a; n,k,m keeps b."""
    c = compile_op(MM, Schedule(tile=T64, order=tuple(order), buffers={"c": 1}))
    d = tiles_data(c, core=0)
    loads = {"a": a_each, "b": b_each}
    for name, each in loads.items():
        assert d.marked(name, "read") == {(i, j) for i in range(4) for j in range(4)}
        assert {m.label for m in d.marks if m.tensor == name} == {f"×{each}" if each > 1 else ""}
        assert d.notes[name] == (f"each loaded {each}×" if each > 1 else "each loaded once")
    assert d.notes["c"] == "each written once"
    order_written = {int(m.label): m.index for m in d.marks if m.tensor == "c"}
    assert sorted(order_written) == list(range(1, 17))
    inner = "n" if order.index("n") > order.index("m") else "m"  # the faster of m and n
    first_two = (order_written[1], order_written[2])
    assert first_two == (((0, 0), (0, 1)) if inner == "n" else ((0, 0), (1, 0)))
    tile_bytes = 64 * 64 * 2
    assert sum(tile_bytes for a in gm_accesses(c)) == c.gm_bytes_expected


def test_cores_view_shows_each_cores_share():
    """4×4 output tiles over 3 cores, parallel m,n: contiguous shares of 6, 5, 5 tiles, row-major."""
    c = compile_op(MM, Schedule(tile=T64, cores=3, parallel=("m", "n")))
    d = tiles_data(c)
    owner = [0] * 6 + [1] * 5 + [2] * 5
    for i in range(16):
        (mark,) = [m for m in d.marks if m.tensor == "c" and m.index == (i // 4, i % 4)]
        assert mark.state == f"core{owner[i]}" and mark.label == str(owner[i])
    rows_a = {m.index[0]: m for m in d.marks if m.tensor == "a" and m.index[1] == 0}
    assert rows_a[0].state == "core0"
    assert (rows_a[1].state, rows_a[1].label) == ("shared", "0,1")  # m row 1 is split between cores 0 and 1
    assert (rows_a[2].state, rows_a[3].state) == ("shared", "core2")
    assert {m.label for m in d.marks if m.tensor == "b"} == {"0,1,2"}
    step = tiles_data(c, step=0, core=1)
    assert step.marked("c", "compute") == {(1, 2)} and step.title.endswith("on core 1 of 3 (mo=1, no=2, ko=0)")


def test_vector_operator_and_its_one_dimensional_operands():
    c = compile_op(make_op("rmsnorm", "64x512"), Schedule(tile={"r": 8}, cores=2))
    d = tiles_data(c, step=2, core=1)  # core 1 runs r tiles 4..7
    assert d.marked("x", "load") == {(6, 0)} and d.marked("y", "store") == {(6, 0)}
    assert d.marked("gamma", "reuse") == {(0,)}  # loaded once per core, before the loop
    assert d.marked("x", "done") == {(4, 0), (5, 0)}
    assert tiles_data(c, step=0, core=1).marked("gamma", "load") == {(0,)}
    rowsum = tiles_data(compile_op(make_op("rowsum", "40x300"), Schedule(tile={"r": 16})), step=2)
    assert rowsum.grid("y").edges == ((0, 16, 32, 40),)  # a tail of 8 rows
    assert rowsum.marked("y", "store") == {(2,)}


def test_bias_tiles_are_loaded_before_the_k_loop():
    """With order m,k,n the bias of every n tile is loaded before the first k step of the m block."""
    c = compile_op(
        make_op("matmul", "128x128x128", bias=True), Schedule(tile=T64, order=("m", "k", "n"), buffers={"c": 1})
    )
    assert tiles_data(c, step=0).marked("bias", "load") == {(0,), (1,)}
    assert tiles_data(c, step=1).marked("bias", "reuse") == {(1,)}
    assert tiles_data(c, step=4).marked("bias", "load") == {(0,), (1,)}  # the next m block


# ---------------------------------------------------------------- against the emitted program


def _program_accesses(case_compiled) -> dict[tuple[int, str, bool], list[tuple[tuple[int, ...], int]]]:
    """Per (core, tensor, write): the tile index and bytes of every GM access of the program, in order.

    Decoded from the instructions' GM regions with the resolved schedule's tile sizes: nothing of the
    tiling plan or the loop nest is used."""
    op, sched = case_compiled.op, case_compiled.schedule
    out: dict[tuple[int, str, bool], list[tuple[tuple[int, ...], int]]] = {}
    for core, stream in enumerate(case_compiled.program.cores):
        for ins in stream:
            for r in ins.regions():
                if r.addr.space is not Space.GM:
                    continue
                t = op.tensor(r.addr.tensor)
                first = r.addr.offset // t.dtype.itemsize
                coords = [first // math.prod(t.shape[i + 1 :]) % t.shape[i] for i in range(len(t.shape))]
                index = []
                for d, x in zip(t.dims, coords):
                    size = sched.tile.get(d) or op.axes()[d]
                    index.append(bisect.bisect_right(range(0, op.axes()[d], size), x) - 1)
                out.setdefault((core, t.name, r.write), []).append((tuple(index), r.rows * r.row_bytes))
    return out


def _tile_bytes(compiled, tensor: str, index: tuple[int, ...]) -> int:
    t = compiled.op.tensor(tensor)
    sizes = [compiled.plan.axis(d).size(i) for d, i in zip(t.dims, index)]
    return math.prod(sizes) * t.dtype.itemsize


@given(cases())
def test_marked_moves_are_the_programs_gm_accesses(case: Case):
    """Every load and store a picture shows is one GM access of the emitted program, in the same order,
    moving exactly the tile's bytes; together they are the GM traffic the compiler's formula predicts."""
    try:
        c = compile_op(case.op, case.schedule, CHIP)
    except BufferCapacityError:
        reject()
    mine: dict[tuple[int, str, bool], list[tuple[tuple[int, ...], int]]] = {}
    for a in gm_accesses(c):
        mine.setdefault((a.core, a.tensor, a.write), []).append((a.index, _tile_bytes(c, a.tensor, a.index)))
    assert mine == _program_accesses(c), str(case)
    assert sum(b for seq in mine.values() for _, b in seq) == c.gm_bytes_expected, str(case)
    for core in range(c.plan.ncores):
        steps = [a.step for a in gm_accesses(c) if a.core == core]
        assert steps == sorted(steps) and steps[0] >= 0 and steps[-1] < c.plan.nsteps(core), str(case)


# -------------------------------------------------------------------------- errors, text, figures


def test_an_epilogue_behind_the_whole_nest_belongs_to_the_last_step():
    """k outermost with a residual: the epilogue (load r, store c) runs in a loop after every k step, so
    its accesses belong to the last step — not to a step past the end (the picture of that step exists)."""
    op = MatMul(1, 17, 17, residual=True)
    c = compile_op(op, Schedule(tile={"m": 16, "n": 16, "k": 16}, order=("k", "n", "m"), buffers={"c": 1}, prefetch=0))
    steps = [a.step for a in gm_accesses(c)]
    assert steps == sorted(steps) and steps[-1] == c.plan.nsteps(0) - 1 == 3, steps
    assert {a.tensor for a in gm_accesses(c) if a.step == 3} == {"b", "r", "c"}
    assert tiles_data(c, step=3).marked("r", "load") == {(0, 0), (0, 1)}


def test_mistakes_are_errors_with_hints(mnk):
    with pytest.raises(DsasimError, match="runs 64 steps") as e:
        tiles_data(mnk, step=64)
    assert e.value.hint == "pick a step from 0 to 63"
    with pytest.raises(DsasimError, match="runs on 1 core"):
        tiles_data(mnk, core=1)
    with pytest.raises(DsasimError, match="need a compiled kernel") as e:
        tiles_data(simulate(ROOT / "examples" / "matmul_tile.s"))
    assert "assembly has no tiling plan" in e.value.hint


def test_text_and_figures(mkn, tmp_path):
    d = tiles_data(mkn, step=5)
    assert d.text().splitlines()[:2] == [
        "matmul 256x256x256: step 5 of 64 (mo=0, ko=1, no=1)",
        "tile m=64,n=64,k=64,k0=64 · order m,k,n · buffers a=3,b=3,c=1 · prefetch 2 · 1 core",
    ]
    assert "    tile (0,1) [0:64, 64:128]           used again, no new GM load" in d.text()
    json.dumps(d.to_json())
    r = compile_and_run(MM, Schedule(tile=T64), timing_only=True)
    for fig in (tiles(mkn, step=5), tiles(mkn, core=0), r.tiles()):
        assert isinstance(fig, DsasimFigure) and fig._repr_png_().startswith(PNG)
    from simulator.plots import save_figure

    assert save_figure(tiles(r, step=3), tmp_path / "t.svg").read_text().startswith("<?xml")


def test_widget_slides_over_the_steps():
    c = compile_op(MM, Schedule(tile=T64, cores=2))
    box = tiles_widget(c)
    controls, image, caption = box.children
    slider, picker = controls.children
    assert (slider.min, slider.max, picker.options) == (0, 31, (0, 1))
    first = bytes(image.value)
    assert first.startswith(PNG) and "step 0 of 32 on core 0" in caption.value
    slider.value = 7
    assert bytes(image.value) != first and "step 7 of 32 on core 0" in caption.value
    picker.value = 1
    assert "step 7 of 32 on core 1" in caption.value


def test_widget_falls_back_without_ipywidgets(monkeypatch, mnk):
    real = builtins.__import__

    def no_widgets(name, *args, **kwargs):
        if name == "ipywidgets":
            raise ImportError("no ipywidgets")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_widgets)
    with pytest.warns(UserWarning, match="pip install ipywidgets"):
        fig = tiles_widget(mnk)
    assert isinstance(fig, DsasimFigure)


def test_cli(tmp_path, capsys):
    out = tmp_path / "step.png"
    args = ["tiles", "matmul", "--shape", "256x256x256", "--tile", "m=64,n=64,k=64", "--order", "m,k,n"]
    assert cli([*args, "--buffers", "c=1", "--step", "5", "-o", str(out)]) == 0
    printed, err = capsys.readouterr()
    assert printed.startswith("matmul 256x256x256: step 5 of 64 (mo=0, ko=1, no=1)\n")
    assert out.read_bytes().startswith(PNG) and f"wrote tiles picture to {out}" in err
    assert cli([*args, "--buffers", "c=1", "--core", "0", "--json"]) == 0
    data = json.loads(capsys.readouterr()[0])
    assert data["view"] == "core" and {m["label"] for m in data["marks"] if m["tensor"] == "b"} == {"×4"}
    for bad, message in (
        (["--step", "99"], "error: step 99 is not a step of core 0"),
        (["--core", "3"], "error: core 3 does not run this kernel"),
        (["-o", str(tmp_path / "x.gif")], "unknown file type"),
        (["-o", str(tmp_path / "no" / "x.png")], "does not exist"),
    ):
        assert cli([*args, *bad]) == 2
        assert message in capsys.readouterr()[1]


# ------------------------------------------------------------------------------------------- docs


def doc_section(title: str) -> str:
    """The text of section ``## title`` of docs/analysis.md."""
    text = (ROOT / "docs" / "analysis.md").read_text()
    return text.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def check_doc_examples(section: str, tmp_path: Path, capsys) -> int:
    """Run every ``$ dsasim`` command of ``section`` (figures go to ``tmp_path``, not docs/figures), check
    each line shown under it is printed, then run its Python blocks. Returns the number of commands."""
    import re
    import shlex

    commands = 0
    for block in re.findall(r"```console\n(.*?)```", section, flags=re.S):
        for chunk in re.split(r"^\$ ", block, flags=re.M)[1:]:
            command, *shown = chunk.rstrip("\n").split("\n")
            argv = shlex.split(command.replace("docs/figures/", f"{tmp_path}/"))
            assert argv[0] == "dsasim" and cli(argv[1:]) == 0, command
            printed = capsys.readouterr()[0].splitlines()
            for line in shown:
                assert line in printed, f"'{command}' no longer prints {line!r}; it printed:\n" + "\n".join(printed)
            commands += 1
    for block in re.findall(r"```python\n(.*?)```", section, flags=re.S):
        exec(compile(block, "docs/analysis.md", "exec"), {"__name__": "docs"})
    return commands


def test_the_docs_tile_pictures_are_current(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert check_doc_examples(doc_section("Tile pictures"), tmp_path, capsys) == 5
    assert "{(0, 1)} {(1, 1)}" in capsys.readouterr()[0]  # the printed comment of the Python example
