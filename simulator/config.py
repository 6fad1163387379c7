"""Chip configurations: presets are TOML data, loaded into a frozen, validated ``Chip``.

Every field is checked: an unknown, missing or out-of-range field raises ``ConfigError`` naming the
field (``paths.gm_l1.bandwidth``) and the accepted range. Presets ship inside the package
(``simulator/presets/*.toml``); any other TOML file can be loaded by path.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import json
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from isa import ConfigError, DType, Space, VInt, VIntScalar, user_errors
from isa.instructions import COPY_ROUTES, FIXPIPE_ROUTES
from isa.records import record
from isa.timing import route_name
from simulator.links import Links, links_from_toml
from simulator.parts import (
    CubeConfig,
    EnergyConfig,
    L2Config,
    MemoryConfig,
    Nd2NzConfig,
    PathConfig,
    VectorConfig,
)

#: Every path a chip must describe: the copy routes plus FIXPIPE's.
ROUTES: tuple[tuple[Space, Space], ...] = (*COPY_ROUTES, *FIXPIPE_ROUTES)

#: The largest on-chip buffer (L1, L0A, L0B, L0C, UB) a chip may declare, in bytes: 64 MiB, 128× the
#: largest of any Ascend part (910B L1: 512 KiB; docs/timing-model.md). A simulation with data holds every
#: buffer of every core in host memory, so an unbounded size would exhaust the machine, not model a chip.
MAX_BUFFER_BYTES = 2**26

#: The classes of instruction whose issue the scalar unit pays differently (``[core] scalar_cost``): ``dma``
#: a data move (MTE1, MTE2, MTE3, FIXPIPE), ``vector`` and ``cube`` a compute instruction, ``sync`` a flag or
#: barrier, ``scalar`` scalar bookkeeping (``scalar N`` pays N on top).
SCALAR_CLASSES = ("dma", "vector", "cube", "sync", "scalar")


@record
class Chip:
    """A validated chip description. Implements ``isa.timing.ChipParams``."""

    name: str
    description: str
    clock_ghz: float
    cores: int
    issue_cycles: int
    queue_depth: int
    event_ids: int
    memory: Mapping[Space, MemoryConfig]
    gm_size: int
    gm_bandwidth: float
    cube: CubeConfig
    vector: VectorConfig
    paths: Mapping[str, PathConfig]
    source: str = ""  # where the config came from (preset name or file)
    energy: EnergyConfig | None = None  # optional [energy] table (not timing-relevant)
    #: cycles from a ``set_cross`` firing to its waiter on another core seeing it ([core], optional)
    cross_flag_latency: int = 0
    #: cross-core flag ids per (source pipe, destination pipe) of two cores ([core], optional)
    cross_flag_ids: int = 16
    #: 0: every core has both the Cube and the Vector unit (coupled). N ≥ 1: separated ([topology]):
    #: ``cores`` Cube cores (AIC) and N Vector cores (AIV) per Cube core, exchanging data through GM
    vector_per_cube: int = 0
    #: the chip-level L2 ([l2], optional): None = every GM transfer goes to ``gm_bandwidth``
    l2: L2Config | None = None
    #: each core's scalar unit starts a seeded random 0..start_jitter cycles late ([core], optional, 0 = off),
    #: so identical streams on many cores do not run in lockstep
    start_jitter: int = 0
    #: the ND→NZ layout change of GM→L1 loads ([nd2nz], optional): None = the chip's Cube takes ND tiles
    nd2nz: Nd2NzConfig | None = None
    #: cycles the scalar unit spends issuing one instruction, by class (``SCALAR_CLASSES``; [core] scalar_cost,
    #: optional): the scalar work a real kernel does per call. A class not given costs ``issue_cycles``
    scalar_cost: Mapping[str, int] = dataclasses.field(default_factory=dict)
    #: the server around the chip ([links], optional: simulator.links): None = a chip alone
    links: Links | None = None

    def __post_init__(self) -> None:
        routes = {(src, dst): self.paths[route_name(src, dst)] for src, dst in ROUTES}
        object.__setattr__(self, "_routes", routes)

    # -- ChipParams ---------------------------------------------------------------------------
    def path(self, src: Space, dst: Space) -> PathConfig:
        return self._routes[(src, dst)]

    def capacity(self, space: Space) -> int:
        return self.gm_size if space is Space.GM else self.memory[space].size

    def alignment(self, space: Space) -> int:
        return 1 if space is Space.GM else self.memory[space].align

    # -- topology ----------------------------------------------------------------------------
    @property
    def separated(self) -> bool:
        """Cube and Vector in different cores (AIC/AIV, as on Ascend 910B), not in one."""
        return self.vector_per_cube > 0

    @property
    def total_cores(self) -> int:
        """Instruction streams the chip can run at once: ``cores``, plus the AIVs when separated."""
        return self.cores * (1 + self.vector_per_cube)

    def core_text(self) -> str:
        """``24`` or, separated, ``24 AIC + 48 AIV``."""
        if not self.separated:
            return str(self.cores)
        return f"{self.cores} AIC + {self.cores * self.vector_per_cube} AIV"

    # -- derived figures ----------------------------------------------------------------------
    @property
    def cube_flops_per_cycle(self) -> int:
        """Per core, f16."""
        return self.cube.flops_per_cycle(DType.F16)

    @property
    def vector_bytes_per_cycle(self) -> int:
        """Per core, at one repeat per cycle."""
        return self.vector.bytes_per_repeat

    def issue_cost(self, cls: str) -> int:
        """Cycles the scalar unit spends issuing one instruction of class ``cls`` (``SCALAR_CLASSES``)."""
        return self.scalar_cost.get(cls, self.issue_cycles)

    def cycles_to_seconds(self, cycles: float) -> float:
        return cycles / (self.clock_ghz * 1e9)

    def with_cores(self, cores: int) -> Chip:
        """The same chip with another core count (``--cores N``)."""
        _check_range("cores", cores, 1, 1024)
        return dataclasses.replace(self, cores=cores)

    def fingerprint(self) -> str:
        """A short hash of every timing-relevant field (for caches and perf databases); computed once per chip."""
        cached = self.__dict__.get("_fingerprint")
        if cached is None:
            cached = self._fingerprint_of_fields()
            object.__setattr__(self, "_fingerprint", cached)
        return cached

    def _fingerprint_of_fields(self) -> str:
        d = dataclasses.asdict(self)
        d.pop("source")
        d.pop("description")
        d.pop("energy")
        d.pop("links")  # the server around the chip: no single-chip run depends on it
        d["memory"] = {k.value: v for k, v in self.memory.items()}
        blob = json.dumps(d, sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def summary(self) -> dict[str, Any]:
        """The figures ``dsasim chips`` shows."""
        return {
            "name": self.name,
            "description": self.description,
            "cores": self.cores,
            "separated": self.separated,
            "vector_per_cube": self.vector_per_cube,
            "clock_ghz": self.clock_ghz,
            "buffers": {s.value: m.size for s, m in self.memory.items()},
            "cube_flops_per_cycle": self.cube_flops_per_cycle,
            "vector_bytes_per_cycle": self.vector_bytes_per_cycle,
            "gm_bytes_per_cycle": self.gm_bandwidth,
            "gm_size": self.gm_size,
            "l2_size": self.l2.size if self.l2 else 0,
            "l2_bytes_per_cycle": self.l2.bandwidth if self.l2 else 0,
            "issue_cycles": {c: self.issue_cost(c) for c in SCALAR_CLASSES},
            "links": self.links.text() if self.links else None,
        }


# ---------------------------------------------------------------------------------- loading


#: The presets shipped in the package, a folder of it (a path, not ``importlib.resources``: that imports ``tempfile``,
#: ``shutil`` and the archive modules, 5 ms of every command, for a package always installed as files)
PRESETS = Path(__file__).with_name("presets")


def preset_names() -> list[str]:
    """Names of the presets shipped in the package."""
    return sorted(p.name[:-5] for p in PRESETS.iterdir() if p.name.endswith(".toml"))


@user_errors
def load_chip(name: str | Path = "edu", *, cores: int | None = None) -> Chip:
    """Load a preset by name (``edu``, ``ascend910b-like``) or a TOML file by path."""
    text_name = str(name)
    if text_name.endswith(".toml") or "/" in text_name:
        path = Path(text_name)
        try:
            data = tomllib.loads(path.read_text())
        except OSError as e:
            raise ConfigError(
                f"cannot read {path}: {e.strerror}",
                field="(file)",
                hint=f"check the path, or name a preset: {', '.join(preset_names())}",
            ) from None
        except UnicodeDecodeError:
            raise ConfigError(
                f"{path} is not a text file (not UTF-8)", field="(file)", hint="name a TOML chip file or a preset"
            ) from None
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(
                f"{path} is not valid TOML: {e}", field="(file)", hint="fix the TOML syntax at the line shown"
            ) from None
        source = str(path)
        data = _with_base(data, path.name)
    else:
        names = preset_names()
        if text_name not in names:
            close = difflib.get_close_matches(text_name, names, n=1)
            hint = f"did you mean {close[0]}?" if close else f"presets: {', '.join(names)}"
            raise ConfigError(f"no preset named '{text_name}'", field="chip", hint=hint)
        data = _with_base(_preset_data(text_name), text_name)
        source = f"preset {text_name}"
    chip = chip_from_dict(data, source=source)
    return chip.with_cores(cores) if cores is not None else chip


def _preset_data(name: str) -> dict[str, Any]:
    return tomllib.loads((PRESETS / f"{name}.toml").read_text())


def _with_base(data: dict[str, Any], who: str, seen: tuple[str, ...] = ()) -> dict[str, Any]:
    """A preset that says ``base = "NAME"`` is preset NAME with its own fields laid over, table by table
    (knobs, not forks: ``ascend910b-like-separated`` changes only the topology of ``ascend910b-like``)."""
    if "base" not in data:
        return data
    base = data["base"]
    if not isinstance(base, str) or base not in preset_names():
        raise ConfigError(
            f"{who}: base {base!r} is not a preset", field="base", hint=f"presets: {', '.join(preset_names())}"
        )
    if base in seen:
        raise ConfigError(f"{who}: presets based on each other in a loop", field="base", hint="remove one base")
    merged = _merge(_with_base(_preset_data(base), base, (*seen, base)), data)
    merged.pop("base")
    return merged


def _merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        out[key] = _merge(out[key], value) if isinstance(value, Mapping) and isinstance(out.get(key), dict) else value
    return out


def chip_from_dict(data: Mapping[str, Any], *, source: str = "") -> Chip:
    """Validate a parsed TOML document and build a ``Chip``."""
    r = _Reader(data, "")
    name = r.text("name")
    description = r.text("description")
    clock = r.number("clock_ghz", 0.01, 100.0)
    cores = r.integer("cores", 1, 1024)
    core = r.table("core")
    issue = core.integer("issue_cycles", 0, 1000)
    depth = core.integer("queue_depth", 1, 4096)
    ids = core.integer("event_ids", 1, 64)
    # optional: cross-core flags (set_cross / wait_cross)
    xlat = core.integer("cross_flag_latency", 0, 10**6) if "cross_flag_latency" in core.data else 0
    xids = core.integer("cross_flag_ids", 1, 64) if "cross_flag_ids" in core.data else 16
    jitter = core.integer("start_jitter", 0, 10**6) if "start_jitter" in core.data else 0  # optional
    scalar_cost = {}
    if "scalar_cost" in core.data:  # optional: issue cycles by class of instruction
        t = core.table("scalar_cost")
        for k in t.data:
            if k not in SCALAR_CLASSES:
                close = difflib.get_close_matches(k, SCALAR_CLASSES, n=1)
                raise ConfigError(
                    "is not a class of instruction",
                    field=f"core.scalar_cost.{k}",
                    hint=(f"did you mean {close[0]}? " if close else "") + f"classes: {', '.join(SCALAR_CLASSES)}",
                )
        scalar_cost = {c: t.integer(c, 0, 10**4) for c in SCALAR_CLASSES if c in t.data}
    core.done()
    vpc = 0
    if "topology" in data:
        topo = r.table("topology")
        separated = topo.boolean("separated")
        if separated or "vector_per_cube" in topo.data:
            n = topo.integer("vector_per_cube", 1, 8)  # AIVs per AIC: 2 on the 910B [S1,S2]
            vpc = n if separated else 0
        topo.done()

    mem = r.table("memory")
    memory = {}
    for space in (Space.L1, Space.L0A, Space.L0B, Space.L0C, Space.UB):
        t = mem.table(space.value)
        memory[space] = MemoryConfig(t.integer("size", 512, MAX_BUFFER_BYTES), t.power_of_two("align", 1, 4096))
        t.done()
    mem.done()

    gm = r.table("gm")
    gm_size = gm.integer("size", 2**16, 2**44)
    gm_bw = gm.number("bandwidth", 0.001, 1e6)
    gm.done()
    l2 = None
    if "l2" in data:  # optional: the chip-level L2 in front of HBM
        t = r.table("l2")
        l2 = L2Config(t.integer("size", 1024, 2**40), t.number("bandwidth", 0.001, 1e6))
        t.done()

    c = r.table("cube")
    cube = CubeConfig(
        c.integer("m0", 1, 256),
        c.integer("n0", 1, 256),
        c.integer("k0_bytes", 2, 1024),  # at least one f16/bf16 element: k0 = k0_bytes / element size
        c.integer("startup", 0, 100000),
        c.integer("min_cycles", 0, 100000),
        c.integer("result_latency", 0, 100000) if "result_latency" in c.data else 0,  # optional
    )
    c.done()

    v = r.table("vector")
    bpr = v.integer("bytes_per_repeat", 1, 65536)
    vstart = v.integer("startup", 0, 100000)
    costs = _op_table(v.table("cost"))
    mins = _op_table(v.table("min_cycles"))
    extra = _op_table(v.table("op_startup"), default=False) if "op_startup" in v.data else {}  # optional
    v.done()
    vector = VectorConfig(bpr, vstart, costs, mins, extra)

    p = r.table("paths")
    paths = {}
    for src, dst in ROUTES:
        key = route_name(src, dst)
        t = p.table(key)
        paths[key] = PathConfig(
            key,
            t.number("bandwidth", 0.001, 1e6),
            t.integer("startup", 0, 10**6),
            t.integer("min_cycles", 0, 10**6),
            t.integer("burst_cycles", 0, 10**5),
            t.integer("granularity", 1, 65536),
            Space.GM in (src, dst),
            t.number("issue_bandwidth", 0.0, 1e6) if "issue_bandwidth" in t.data else 0.0,  # optional
            t.integer("outstanding", 1, 256) if "outstanding" in t.data else 1,  # optional
            t.integer("latency", 0, 10**6) if "latency" in t.data else 0,  # optional
        )
        t.done()
    p.done()
    nd2nz = None
    if "nd2nz" in data:  # optional: GM→L1 loads change the layout to NZ on the way
        nd2nz = _nd2nz(r.table("nd2nz"), clock)
    energy = _energy(r.table("energy")) if "energy" in data else None
    links = links_from_toml(r._get("links"), clock) if "links" in data else None  # optional: the server
    r.done()
    return Chip(
        name, description, clock, cores, issue, depth, ids, memory, gm_size, gm_bw, cube, vector, paths, source, energy,
        xlat, xids, vpc, l2, jitter, nd2nz, scalar_cost=scalar_cost, links=links,
    )  # fmt: skip


def _nd2nz(t: _Reader, clock_ghz: float) -> Nd2NzConfig:
    """``[nd2nz]``: either ``curve = [[KiB, GiB/s], …]`` (a measured back-to-back stream, as msKPP prints its
    tables; ``period`` KiB optional) or ``min_cycles`` and ``bandwidth`` (the rule)."""
    if "curve" not in t.data:
        out = Nd2NzConfig(t.integer("min_cycles", 0, 10**6), t.number("bandwidth", 0.001, 1e6))
        t.done()
        return out
    field, raw = t.prefix + "curve", t._get("curve")
    hint = "write it as [[KiB, GiB/s], ...]: two or more points, sizes increasing, rates above 0"
    if not isinstance(raw, list) or len(raw) < 2:
        raise ConfigError("must be a list of two or more [KiB, GiB/s] points", field=field, hint=hint)
    points: list[tuple[int, float]] = []
    for i, pt in enumerate(raw):
        ok = (
            isinstance(pt, list)
            and len(pt) == 2
            and all(isinstance(v, int | float) and not isinstance(v, bool) for v in pt)
        )
        if not ok or not 0 < pt[0] <= 2**20 or not 0 < pt[1] <= 1e6:
            raise ConfigError(f"point {i} is {pt!r}", field=field, hint=hint)
        b = round(pt[0] * 1024)
        if points and b <= points[-1][0]:
            raise ConfigError(f"point {i} ({pt[0]} KiB) does not follow the size before it", field=field, hint=hint)
        points.append((b, pt[1] * 2**30 / (clock_ghz * 1e9)))  # GiB/s → bytes/cycle
    period = 0
    if "period" in t.data:
        span = (points[-1][0] - points[0][0]) // 1024
        period = t.integer("period", 1, max(1, span)) * 1024
    t.done()
    return Nd2NzConfig(curve=tuple(points), period=period)


def _is_number(v: object) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _energy(t: _Reader) -> EnergyConfig:
    """The optional ``[energy]`` table: every memory level and Cube dtype required, paths optional."""
    source = t.text("source")
    vector_repeat = t.number("vector_repeat", 0.0, 1e6)
    m = t.table("memory")
    memory = {space: m.number(space.value, 0.0, 1e6) for space in Space}
    m.done()
    mt = t.table("mac")
    mac = {d: mt.number(d.value, 0.0, 1e6) for d in (DType.F16, DType.BF16, DType.I8)}
    mt.done()
    paths = {}
    if "path" in t.data:
        pt = t.table("path")
        for src, dst in ROUTES:
            key = route_name(src, dst)
            if key in pt.data:
                paths[key] = pt.number(key, 0.0, 1e6)
        pt.done()
    t.done()
    return EnergyConfig(source, memory, paths, mac, vector_repeat)


_VECTOR_OPS = frozenset(
    {"add", "sub", "mul", "div", "max", "min", "abs", "exp", "ln", "sqrt", "rsqrt", "recip", "relu", "copy"}
    | {"adds", "muls", "maxs", "mins", "dup", "cast", "rowsum", "rowmax", "rowbcast"}
    | {"tril", "triu", "transpose"}
    | {"cmp", "cmps", "sel", "sels", "gather", "scatter", "scan"}
    | {"sin", "cos", "tanh", "erf", "floor", "log1p"}
    | set(VInt.OPS)
    | set(VIntScalar.OPS)
)


def _op_table(t: _Reader, default: bool = True) -> dict[str, int]:
    out = {"default": t.integer("default", 0, 100000)} if default else {}
    names = [d.value for d in DType]
    for key in list(t.data):
        if isinstance(t.data[key], Mapping):  # TOML reads an unquoted add.f16 = 3 as the table add = {f16 = 3}
            inner = next(iter(t.data[key]), "f16")
            raise ConfigError(
                f"is a table, not a cost: TOML reads an unquoted {key}.{inner} = N as a table {key}",
                field=t.prefix + key,
                hint=f'quote a per-type key: "{key}.{inner}" = N',
            )
        op, _, dt = key.partition(".")
        src, _, to = dt.partition(".")  # "cast.f32.bf16": a cast from one type to another
        if op not in _VECTOR_OPS or (src and src not in names) or (to and (op != "cast" or to not in names)):
            continue  # left for done() to report as unknown
        out[key] = t.integer(key, 0, 100000)
    t.done()
    return out


def _check_range(field: str, value: float, lo: float, hi: float) -> None:
    if not lo <= value <= hi:
        raise ConfigError(f"{value} is out of range", field=field, hint=f"accepted range: {lo} to {hi}")


class _Reader:
    """Reads fields out of one TOML table, remembering which were used; ``done`` rejects the rest."""

    def __init__(self, data: Any, prefix: str) -> None:
        if not isinstance(data, Mapping):
            raise ConfigError(
                "must be a table", field=prefix.rstrip(".") or "(top level)", hint="write it as [section] or { ... }"
            )
        self.data, self.prefix, self.used = data, prefix, set()

    def _get(self, key: str) -> Any:
        field = self.prefix + key
        if key not in self.data:
            raise ConfigError("is missing", field=field, hint="every field of a preset must be given")
        self.used.add(key)
        return self.data[key]

    def text(self, key: str) -> str:
        v = self._get(key)
        if not isinstance(v, str) or not v:
            raise ConfigError("must be a non-empty string", field=self.prefix + key, hint='write it as "text"')
        return v

    def number(self, key: str, lo: float, hi: float) -> float:
        v = self._get(key)
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise ConfigError(
                f"must be a number, not {v!r}", field=self.prefix + key, hint=f"accepted range: {lo} to {hi}"
            )
        _check_range(self.prefix + key, v, lo, hi)
        return float(v)

    def boolean(self, key: str) -> bool:
        v = self._get(key)
        if not isinstance(v, bool):
            raise ConfigError(f"must be true or false, not {v!r}", field=self.prefix + key, hint="write true or false")
        return v

    def integer(self, key: str, lo: int, hi: int) -> int:
        v = self._get(key)
        if isinstance(v, bool) or not isinstance(v, int):
            raise ConfigError(
                f"must be an integer, not {v!r}", field=self.prefix + key, hint=f"accepted range: {lo} to {hi}"
            )
        _check_range(self.prefix + key, v, lo, hi)
        return v

    def power_of_two(self, key: str, lo: int, hi: int) -> int:
        """An integer that is a power of two (an alignment: addresses are checked and rounded with it)."""
        v = self.integer(key, lo, hi)
        if v & (v - 1):
            below = 1 << (v.bit_length() - 1)
            raise ConfigError(f"{v} is not a power of two", field=self.prefix + key, hint=f"use {below} or {2 * below}")
        return v

    def table(self, key: str) -> _Reader:
        return _Reader(self._get(key), f"{self.prefix}{key}.")

    def done(self) -> None:
        extra = [k for k in self.data if k not in self.used]
        if extra:
            k = extra[0]
            close = difflib.get_close_matches(k, [*self.used, *self.data], n=2)
            close = [c for c in close if c != k]
            hint = f"did you mean {close[0]}?" if close else "remove it"
            raise ConfigError("is not a known field", field=self.prefix + k, hint=hint)
