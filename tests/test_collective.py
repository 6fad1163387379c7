"""Collectives over a server of chips: the programs compute the right sums, one rank stands for all exactly
when the programs are symmetric, the timing meets the α-β model at large sizes, and mistakes are errors."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import numpy as np
import pytest

import simulator
from dsasim.cli import main as cli_main
from isa import ConfigError, DsasimError
from simulator.collective import MAX_PUTS, segments, simulate_collective
from simulator.collective.model import bus_factor
from simulator.config import chip_from_dict, load_chip

EDU = load_chip("edu")
B910 = load_chip("ascend910b-like")


def _edu_data() -> dict:
    return tomllib.loads((Path(simulator.__file__).parent / "presets" / "edu.toml").read_text())


def _inputs(n: int, nbytes: int, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    # small integers: float32 sums are exact in any order
    return [rng.integers(-8, 8, nbytes // 4).astype(np.float32) for _ in range(n)]


@pytest.mark.parametrize("chip,algo", [(EDU, "ring"), (B910, "ring"), (B910, "mesh")])
@pytest.mark.parametrize("op", ["all-reduce", "reduce-scatter", "all-gather"])
def test_reductions_and_gathers_compute_the_right_data(chip, algo, op):
    n, nbytes = chip.links.chips, 4096 * chip.links.chips
    data = _inputs(n, nbytes)
    out = [o["data"] for o in simulate_collective(op, chip, chips=n, nbytes=nbytes, algo=algo, chunk=1024,
                                                  data=data).result.outputs]  # fmt: skip
    total = np.sum(data, axis=0)
    segs = segments(nbytes, n)
    for r in range(n):
        o, size = segs[r][0] // 4, segs[r][1] // 4
        if op == "all-reduce":
            np.testing.assert_array_equal(out[r], total)
        elif op == "reduce-scatter":
            np.testing.assert_array_equal(out[r][o : o + size], total[o : o + size])
        else:
            want = np.concatenate([data[p][segs[p][0] // 4 : (segs[p][0] + segs[p][1]) // 4] for p in range(n)])
            np.testing.assert_array_equal(out[r], want)


def test_all_to_all_and_send_recv_move_the_right_blocks():
    n, nbytes = 8, 8 * 2048
    data = _inputs(n, nbytes, seed=1)
    segs = segments(nbytes, n)
    run = simulate_collective("all-to-all", B910, chips=n, nbytes=nbytes, algo="mesh", chunk=512, data=data)
    for r in range(n):
        for p in range(n):  # p == r too: the block a rank keeps for itself is part of its output
            o, size = segs[p][0] // 4, segs[p][1] // 4  # rank r's recv block p: rank p's data block r
            src = segs[r][0] // 4
            np.testing.assert_array_equal(run.result.outputs[r]["recv"][o : o + size], data[p][src : src + size])
    run = simulate_collective("send-recv", EDU, chips=4, nbytes=4096, algo="ring", chunk=1024, data=_inputs(4, 4096))
    for r in range(4):
        np.testing.assert_array_equal(run.result.outputs[r]["recv"], _inputs(4, 4096)[(r - 1) % 4])


@pytest.mark.parametrize(
    "chip,algo,op",
    [(EDU, "ring", "all-reduce"), (EDU, "ring", "all-gather"), (EDU, "ring", "send-recv"),
     (B910, "ring", "all-reduce"), (B910, "mesh", "all-reduce"), (B910, "mesh", "reduce-scatter"),
     (B910, "mesh", "all-to-all")],
)  # fmt: skip
def test_one_rank_for_all_equals_every_rank(chip, algo, op):
    """A symmetric collective simulated for rank 0 alone gives the cycles, and rank 0's flag times, of
    simulating every rank."""
    n = chip.links.chips
    kw = {"chips": n, "nbytes": n * 24576, "algo": algo, "chunk": 2048}
    once = simulate_collective(op, chip, once=True, **kw)
    every = simulate_collective(op, chip, once=False, **kw)
    assert once.result.once and not every.result.once
    assert once.result.cycles == every.result.cycles > 0
    assert once.result.flag_times == every.result.flag_times
    assert [s for s in every.result.spans if s.rank == 0] == once.result.spans


def test_dsasim_fast_off_simulates_every_rank_with_the_same_cycles(monkeypatch):
    fast = simulate_collective("all-reduce", B910, chips=8, nbytes=1 << 20, algo="mesh")
    monkeypatch.setenv("DSASIM_FAST", "0")
    slow = simulate_collective("all-reduce", B910, chips=8, nbytes=1 << 20, algo="mesh")
    assert fast.result.once and not slow.result.once
    assert fast.result.cycles == slow.result.cycles


def test_across_servers_is_not_symmetric_and_runs_every_rank():
    r = simulate_collective("all-reduce", B910, chips=16, nbytes=16 << 20, algo="ring")
    assert not r.result.once
    assert set(r.result.link_bytes) == {"link", "network"}
    assert r.beta_Bps == B910.links.network.bandwidth_Bps  # the slowest link bounds the ring


def test_ring_all_reduce_of_256m_meets_alpha_beta_and_one_link():
    r = simulate_collective("all-reduce", B910, chips=8, nbytes=256 << 20, algo="ring")
    assert abs(r.seconds / r.predicted_s - 1) < 0.10
    assert r.busbw <= B910.links.link.bandwidth_Bps
    # every byte that crosses a link: 2(n-1) segments per rank
    assert r.result.link_bytes["link"] == 2 * 7 * (256 << 20) // 8  # rank 0's (one simulated rank)


@pytest.mark.parametrize("size", [4096, 1 << 16, 1 << 20, 16 << 20])
def test_bus_bandwidth_of_a_ring_never_exceeds_one_link(size):
    for op in ("all-reduce", "reduce-scatter", "all-gather", "send-recv"):
        r = simulate_collective(op, B910, chips=8, nbytes=size * 8, algo="ring")
        assert r.busbw <= B910.links.link.bandwidth_Bps * (1 + 1e-9), op


def test_mesh_uses_every_dma_engine_and_small_sizes_pay_latency():
    big = simulate_collective("all-gather", B910, chips=8, nbytes=64 << 20, algo="mesh")
    e = B910.links.dma_engines
    assert big.busbw > (e - 0.5) * B910.links.link.bandwidth_Bps  # e links at once
    assert big.busbw <= e * B910.links.link.bandwidth_Bps
    small = simulate_collective("all-gather", B910, chips=8, nbytes=8 * 64, algo="mesh")
    assert small.seconds >= B910.links.link.latency_s


def test_nccl_tests_bus_factors():
    assert bus_factor("all-reduce", 8) == 2 * 7 / 8
    assert bus_factor("all-gather", 4) == bus_factor("reduce-scatter", 4) == bus_factor("all-to-all", 4) == 3 / 4
    assert bus_factor("send-recv", 8) == 1


def test_mistakes_are_errors():
    with pytest.raises(DsasimError, match="not linked"):
        simulate_collective("all-reduce", EDU, chips=4, nbytes=4096, algo="mesh")
    with pytest.raises(DsasimError, match="multiple of"):
        simulate_collective("all-reduce", B910, chips=8, nbytes=100)
    with pytest.raises(DsasimError, match="GM"):
        simulate_collective("all-reduce", EDU, chips=4, nbytes=1 << 30)
    with pytest.raises(DsasimError, match="--algo mesh"):
        simulate_collective("all-to-all", B910, chips=8, nbytes=4096, algo="ring")
    data = _edu_data()
    data.pop("links")
    lonely = chip_from_dict(data)
    assert lonely.links is None
    with pytest.raises(DsasimError, match="no \\[links\\]"):
        simulate_collective("all-reduce", lonely, chips=2, nbytes=4096)


def test_the_hints_of_a_refused_collective_are_ones_that_run():
    """A ring over 3 of a 4-chip ring server does not close: the hint says which rings do (not "--algo ring",
    which it already is). Too many transfers: the hinted --chunk runs, or — when a chunk per segment is already
    too many — the hint names the chips that fit instead of a chunk smaller than the one given."""
    with pytest.raises(DsasimError) as e:
        simulate_collective("all-reduce", EDU, chips=3, nbytes=1200, algo="ring")
    assert "--chips 4" in e.value.hint and "over 2" in e.value.hint
    with pytest.raises(DsasimError) as e:
        simulate_collective("all-reduce", B910, chips=8, nbytes=4 << 20, chunk=4)
    chunk = int(e.value.hint.rpartition("--chunk ")[2])
    assert chunk % 4 == 0
    simulate_collective("all-reduce", B910, chips=8, nbytes=4 << 20, chunk=chunk)
    with pytest.raises(DsasimError) as e:
        simulate_collective("all-reduce", B910, chips=1024, nbytes=4 << 20)
    assert "--chunk" not in e.value.hint
    chips = int(e.value.hint.split("--chips ")[1].split()[0])
    assert chips * (chips - 1) * 2 <= MAX_PUTS < (chips + 1) * chips * 2


@pytest.mark.parametrize(
    "links,field",
    [({"topology": "star"}, "links.topology"), ({"chips": 0}, "links.chips"),
     ({"bandwidth_gbps": -1}, "links.bandwidth_gbps"), ({"latency_us": "1"}, "links.latency_us"),
     ({"dma_engines": 1.5}, "links.dma_engines"), ({"speed": 1}, "links.speed")],
)  # fmt: skip
def test_links_table_is_validated(links, field):
    data = _edu_data()
    data["links"] = {**data["links"], **links}
    with pytest.raises(ConfigError) as e:
        chip_from_dict(data)
    assert e.value.field == field


def _cli(capsys, *args: str) -> tuple[int, str, str]:
    code = cli_main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_collective_json_and_errors(tmp_path, capsys):
    args = ("--chips", "8", "--bytes", "64M", "--algo", "ring", "--chip", "ascend910b-like", "--json")
    code, out, err = _cli(capsys, "collective", "all-reduce", *args)
    assert code == 0, err
    j = json.loads(out)
    assert {"seconds", "algbw", "busbw", "link_bandwidth_Bps", "link_latency_s", "alpha_beta"} <= set(j)
    assert j["busbw"] == pytest.approx(j["algbw"] * 2 * 7 / 8)
    code, out, err = _cli(capsys, "collective", "all-reduce", "--chips", "4", "--sweep", "4K,64K", "--plot",
                          str(tmp_path / "s.png"))  # fmt: skip
    assert code == 0 and (tmp_path / "s.png").stat().st_size > 0, err
    for bad in (["--bytes", "12Q"], ["--algo", "mesh"], ["--plot", "x.png"], ["--chips", "0"]):
        code, out, err = _cli(capsys, "collective", "all-reduce", *bad)
        assert code == 2 and err.startswith("error:"), (bad, err)
