"""Serving a request trace with continuous batching: when each request gets its first token, how fast the
rest follow, and how many tokens per second the chip turns out.

    from dsasim.serve import load_trace, serve
    from dsasim.model import MODEL_CONFIGS

    r = serve(load_trace("examples/serve/azure_conv_50.jsonl"), MODEL_CONFIGS["tinyllama-1.1b"], "ascend910b-like")
    r.to_json()["ttft_p99_s"]

**The scheduler** (vLLM's, in its simplest form). Requests wait in arrival order. The KV cache is paged:
``blocks`` blocks of ``block`` tokens (by default as many as fit HBM beside the weights). Each iteration:

- *prefill first* (default): if requests are waiting and their prompts' blocks are free, admit them (in
  order, up to ``max_batch`` running, stopping at the first that does not fit) and run one prefill
  iteration over them; each gets its first token at its end. Otherwise run one decode iteration over every
  running request. A request that needs a new block when none is free preempts the latest admitted one,
  which frees its blocks and waits again at the front of the queue (its prompt and output so far are
  prefilled again: *recompute*).
- *chunked prefill* (``chunk = N``): every iteration decodes every running request and prefills up to ``N``
  prompt tokens of the waiting ones (a prompt may take several iterations); admission is the same.

**Iteration times come from the simulator**, memoised for the run (``StepTimes``): a decode iteration of
``b`` sequences whose longest context is ``L`` is priced by simulating the whole model's decode step
(``dsasim.model.run_model``) at batch and context rounded *up* to the next power of ``bucket`` (2 by
default: at most 2× the true batch and context, always pessimistic); a prefill iteration as the sum of
each prompt's own prefill step (one sequence of its length rounded up the same way) — the weights are
read once per prompt where one batched prefill reads them once. A chunked iteration is priced as its
decode step plus each chunk piece's prefill as a prompt of its own length (its attention to the earlier
chunks of its prompt is not counted). No launch or host overhead, no sampling, no network.
"""

from __future__ import annotations

import json
import math
from collections import deque
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from dsasim.model import ModelConfig, memory, run_model
from isa import DsasimError
from isa.records import record
from simulator.config import Chip, load_chip

TRACE_FIELDS = ("arrival_s", "prompt_tokens", "output_tokens")


@record
class Request:
    """One line of a trace: when it arrives (seconds), its prompt's tokens, the tokens it will generate."""

    id: int
    arrival_s: float
    prompt_tokens: int
    output_tokens: int


#: the longest span of arrivals served (seconds, about 11.6 days): a float's step there is 0.1 ns
MAX_SPAN_S = 1e6


def load_trace(path: str | Path, speedup: float = 1.0) -> tuple[Request, ...]:
    """A JSONL trace, one request a line with ``arrival_s``, ``prompt_tokens``, ``output_tokens``; sorted
    by arrival (ties in file order). ``speedup``: arrivals ``speedup`` times closer together (the same
    requests at ``speedup`` times the rate)."""
    if not (isinstance(speedup, (int, float)) and math.isfinite(speedup) and speedup > 0):
        raise DsasimError(f"--speedup {speedup!r} must be a positive number", hint="e.g. --speedup 10")
    p = Path(path)
    try:
        lines = p.read_text().splitlines()
    except OSError as e:
        raise DsasimError(f"trace {p}: {e.strerror}", hint="give a JSONL file, one request a line") from e
    except ValueError as e:  # not UTF-8 text
        raise DsasimError(f"trace {p}: {e}", hint="give a JSONL file, one request a line") from e
    out = []
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise DsasimError(f"{p}:{i}: not JSON ({e.msg})", hint="one JSON object a line") from e
        for f in TRACE_FIELDS:
            v = row.get(f) if isinstance(row, dict) else None
            ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            if not ok or v < 0 or (f != "arrival_s" and (v != int(v) or v < 1)):
                raise DsasimError(
                    f"{p}:{i}: field '{f}' is {v!r}",
                    hint="arrival_s: seconds ≥ 0; prompt_tokens and output_tokens: integers ≥ 1",
                )
        arrival = float(row["arrival_s"]) / speedup
        out.append(Request(len(out), arrival, int(row["prompt_tokens"]), int(row["output_tokens"])))
    if not out:
        raise DsasimError(f"trace {p} has no requests", hint="one JSON object a line")
    first = min(r.arrival_s for r in out)  # times from the first request: a float's step stays far below a step's
    span = max(r.arrival_s for r in out) - first
    if not span <= MAX_SPAN_S:
        raise DsasimError(
            f"trace {p}: the arrivals span {span:g} s (after --speedup {speedup:g}); at most {MAX_SPAN_S:g} s are "
            "served, where a float still tells a step's microseconds apart",
            hint="a shorter trace, or a larger --speedup",
        )
    out = [replace(r, arrival_s=r.arrival_s - first) for r in out]
    return tuple(sorted(out, key=lambda r: (r.arrival_s, r.id)))


def bucket_up(n: int, base: int) -> int:
    """``n`` rounded up to a power of ``base`` (1, base, base², ...)."""
    b = 1
    while b < n:
        b *= base
    return b


@dataclass
class StepTimes:
    """Iteration times (seconds) from the simulator, memoised per (phase, batch bucket, tokens bucket) for
    one model on one chip — the object lives as long as the serving run that asks."""

    cfg: ModelConfig
    chip: Chip
    bucket: int = 2
    weights: str = "f16"
    memo: dict[tuple[str, int, int], float] = field(default_factory=dict)
    heads: dict = field(default_factory=dict)  # the LM head's runs by rows and weight type (``run_model``'s memo)

    def decode(self, batch: int, context: int) -> float:
        return self._step("decode", bucket_up(batch, self.bucket), bucket_up(context, self.bucket))

    def prefill(self, prompts: list[int]) -> float:
        """Each prompt's prefill step (one sequence of its tokens, rounded up), summed."""
        return sum(self._step("prefill", 1, max(16, bucket_up(n, self.bucket))) for n in prompts)

    def _step(self, phase: str, batch: int, tokens: int) -> float:
        key = (phase, batch, tokens)
        if key not in self.memo:
            try:
                r = run_model(self.cfg, phase, batch, context=tokens, seq=tokens, chip=self.chip, check_memory=False,
                              heads=self.heads, weights=self.weights)  # fmt: skip
            except DsasimError as e:  # a long prompt's prefill over the instruction budget: say which knob helps
                what = f"a {phase} step of batch {batch} and {tokens:,} tokens (rounded up to a power of {self.bucket})"
                knob = "--chunk 1024 (no prefill step longer than the chunk)" if phase == "prefill" else "--bucket 2"
                raise DsasimError(f"pricing {what}: {e.message}", hint=f"use {knob}") from e
            self.memo[key] = r.seconds
        return self.memo[key]


@dataclass
class _Live:
    """A request in the engine: tokens prefilled, tokens generated, blocks held."""

    req: Request
    prefilled: int = 0
    generated: int = 0
    blocks: int = 0
    first_token_s: float | None = None
    done_s: float | None = None

    @property
    def target_prefill(self) -> int:
        """Tokens to prefill: the prompt, plus what it generated before a preemption (recompute)."""
        return self.req.prompt_tokens + self.generated

    @property
    def context(self) -> int:
        return self.req.prompt_tokens + self.generated


@record
class Iteration:
    """One engine step: when it started and ended, its kind, the running batch and the KV blocks in use."""

    start_s: float
    end_s: float
    kind: str
    batch: int
    prefill_tokens: int
    kv_blocks: int


@dataclass
class ServeResult:
    requests: tuple[_Live, ...]
    iterations: tuple[Iteration, ...]
    blocks: int
    block: int
    chunk: int | None
    bucket: int
    decode_b1_s: float
    preemptions: int
    simulated_steps: int
    weights: str = "f16"

    def _pct(self, values: list[float], q: float) -> float:
        return float(np.percentile(np.asarray(values, dtype=np.float64), q)) if values else float("nan")

    def to_json(self) -> dict:
        reqs = self.requests
        ttft = [r.first_token_s - r.req.arrival_s for r in reqs]
        tpot = [(r.done_s - r.first_token_s) / (r.req.output_tokens - 1) for r in reqs if r.req.output_tokens > 1]
        span = max(r.done_s for r in reqs) - min(r.req.arrival_s for r in reqs)
        out_tokens = sum(r.req.output_tokens for r in reqs)
        return {
            "requests": len(reqs),
            "weights": self.weights,
            "ttft_p50_s": self._pct(ttft, 50),
            "ttft_p99_s": self._pct(ttft, 99),
            "tpot_p50_s": self._pct(tpot, 50),
            "tpot_p99_s": self._pct(tpot, 99),
            "throughput_tokens_per_s": out_tokens / span,
            "output_tokens": out_tokens,
            "makespan_s": span,
            "iterations": len(self.iterations),
            "max_batch_seen": max(i.batch for i in self.iterations),
            "kv_blocks": self.blocks,
            "kv_block_tokens": self.block,
            "max_kv_blocks_used": max(i.kv_blocks for i in self.iterations),
            "preemptions": self.preemptions,
            "chunk": self.chunk,
            "decode_step_b1_s": self.decode_b1_s,
            "step_times": {
                "source": "simulated whole-model steps, memoised per bucket",
                "bucket": f"batch and context rounded up to a power of {self.bucket}",
                "simulated_steps": self.simulated_steps,
            },
        }

    def plot(self, path: str | Path) -> None:
        """Batch size and KV blocks in use over time (one point per iteration), saved to ``path``."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        its = self.iterations
        starts, ends = [i.start_s for i in its], [i.end_s for i in its]
        fig, ax = plt.subplots(figsize=(8, 3.5))
        ax.hlines([i.batch for i in its], starts, ends, color="C0", lw=2)  # idle between arrivals: no line
        ax.set_xlabel("time (s)")
        ax.set_ylabel("running requests", color="C0")
        ax.set_ylim(0, max(i.batch for i in its) * 1.15 + 0.5)
        ax2 = ax.twinx()
        used = [i.kv_blocks for i in its]
        ax2.hlines(used, starts, ends, color="C1", lw=1)
        if self.blocks <= 2 * max(used):  # the pool's size, when it is in reach
            ax2.axhline(self.blocks, color="C1", ls=":", lw=1)
        ax2.set_ylim(0, max(max(used) * 1.15, 1) if self.blocks > 2 * max(used) else self.blocks * 1.05)
        ax2.set_ylabel(f"KV blocks in use (of {self.blocks:,})", color="C1")
        ax.set_title("continuous batching: batch size and KV blocks over time")
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)


def kv_block_budget(cfg: ModelConfig, chip: Chip, block: int, max_batch: int, weights: str = "f16") -> int:
    """KV blocks that fit HBM beside the weights (stored at ``weights``) and ``max_batch`` sequences' workspace."""
    per_block = cfg.kv_bytes_per_token() * block
    mem = memory(cfg, chip, max_batch, 1, weights=weights)
    return max(0, (chip.gm_size - mem.weights_bytes - mem.workspace_bytes) // per_block)


def serve(
    trace: tuple[Request, ...],
    cfg: ModelConfig,
    chip: Chip | str = "ascend910b-like",
    *,
    block: int = 16,
    blocks: int | None = None,
    max_batch: int = 256,
    chunk: int | None = None,
    bucket: int = 2,
    times: StepTimes | None = None,
    weights: str = "f16",
) -> ServeResult:
    """Run ``trace`` through the continuous-batching scheduler (module doc) and measure it. ``times``: the
    iteration times to use (default: a new ``StepTimes`` of the simulator for this model and chip, its weights
    stored at ``weights``: f16, int8 or int4, which also sets the HBM left for KV blocks)."""
    chip_obj = load_chip(chip) if isinstance(chip, str) else chip
    given = (("--kv-block", block, 1), ("--max-batch", max_batch, 1), ("--chunk", chunk, 1), ("--bucket", bucket, 2))
    for name, v, least in given:
        if v is not None and v < least:
            raise DsasimError(f"{name} {v} is too small", hint=f"{name} takes an integer ≥ {least}")
    total = blocks if blocks is not None else kv_block_budget(cfg, chip_obj, block, max_batch, weights)
    need = max(-(-(r.prompt_tokens + r.output_tokens) // block) for r in trace)
    if total < need:
        raise DsasimError(
            f"the longest request needs {need} KV blocks of {block} tokens but only {total} exist",
            hint="give more --kv-blocks, a larger --kv-block or a shorter request",
        )
    times = times if times is not None else StepTimes(cfg, chip_obj, bucket, weights)
    return _Engine(trace, total, block, max_batch, chunk, times).run()


class _Engine:
    def __init__(
        self, trace: tuple[Request, ...], blocks: int, block: int, max_batch: int, chunk: int | None, times: StepTimes
    ) -> None:
        self.pending = deque(_Live(r) for r in trace)  # not yet arrived
        self.waiting: deque[_Live] = deque()
        self.running: list[_Live] = []
        self.done: list[_Live] = []
        self.free, self.total, self.block = blocks, blocks, block
        self.max_batch, self.chunk, self.times = max_batch, chunk, times
        self.now = 0.0
        self.iterations: list[Iteration] = []
        self.preemptions = 0

    def blocks_for(self, tokens: int) -> int:
        return -(-tokens // self.block)

    def arrive(self) -> None:
        while self.pending and self.pending[0].req.arrival_s <= self.now:
            self.waiting.append(self.pending.popleft())

    def admit(self) -> list[_Live]:
        """Waiting requests whose prompt's blocks (and the first output token's) are free, in order."""
        out = []
        while self.waiting and len(self.running) < self.max_batch:
            r = self.waiting[0]
            need = self.blocks_for(r.target_prefill + 1)
            if need > self.free:
                break
            self.waiting.popleft()
            r.blocks, self.free = need, self.free - need
            r.prefilled = 0
            self.running.append(r)
            out.append(r)
        return out

    def grow(self) -> None:
        """Every decoding request gets the block its next token needs, preempting the latest admitted."""
        for r in list(self.running):
            if r not in self.running or r.prefilled < r.target_prefill:
                continue
            need = self.blocks_for(r.context + 1) - r.blocks
            while need > self.free and len(self.running) > 1:
                victim = self.running.pop()
                self.free += victim.blocks
                victim.blocks = 0
                self.waiting.appendleft(victim)
                self.preemptions += 1
                if victim is r:
                    break
            if r in self.running and need <= self.free:
                r.blocks += need
                self.free -= need

    def step(self) -> None:
        if self.chunk is None:
            new = self.admit()
            if new:
                prompts = [r.target_prefill for r in new]
                self.finish_iteration(self.times.prefill(prompts), "prefill", sum(prompts), prefilled=new, decoded=[])
                return
            self.grow()
            decoding = [r for r in self.running if r.prefilled >= r.target_prefill]
            ctx = max(r.context for r in decoding)
            self.finish_iteration(self.times.decode(len(decoding), ctx), "decode", 0, prefilled=[], decoded=decoding)
            return
        self.admit()
        self.grow()
        decoding = [r for r in self.running if r.prefilled >= r.target_prefill]
        budget, prefilled, pieces = self.chunk, [], []
        for r in self.running:
            if r.prefilled < r.target_prefill and budget > 0:
                take = min(budget, r.target_prefill - r.prefilled)
                r.prefilled += take
                budget -= take
                pieces.append(take)
                if r.prefilled >= r.target_prefill:
                    prefilled.append(r)
        tokens = sum(pieces)
        t = self.times.prefill(pieces) if pieces else 0.0
        if decoding:
            t += self.times.decode(len(decoding), max(r.context for r in decoding))
        self.finish_iteration(t, "mixed" if tokens and decoding else ("prefill" if tokens else "decode"), tokens,
                              prefilled=prefilled, decoded=decoding)  # fmt: skip

    def finish_iteration(self, seconds: float, kind: str, tokens: int, prefilled: list, decoded: list) -> None:
        self.now += seconds
        self.iterations.append(
            Iteration(self.now - seconds, self.now, kind, len(self.running), tokens, self.total - self.free)
        )
        for r in prefilled:  # a prefill produces the next token
            r.prefilled = r.target_prefill
            self.emit(r)
        for r in decoded:
            self.emit(r)

    def emit(self, r: _Live) -> None:
        r.generated += 1
        r.prefilled += 1  # the new token is in the cache
        if r.first_token_s is None:
            r.first_token_s = self.now
        if r.generated >= r.req.output_tokens:
            r.done_s = self.now
            self.running.remove(r)
            self.free += r.blocks
            r.blocks = 0
            self.done.append(r)

    def run(self) -> ServeResult:
        while self.pending or self.waiting or self.running:
            self.arrive()
            if not self.waiting and not self.running:
                self.now = self.pending[0].req.arrival_s
                continue
            before = len(self.iterations)
            self.step()
            if len(self.iterations) == before:  # pragma: no cover - every step records an iteration
                raise RuntimeError("the scheduler made no progress")
        b1 = self.times.decode(1, 1)
        return ServeResult(
            tuple(sorted(self.done, key=lambda r: r.req.id)),
            tuple(self.iterations),
            self.total,
            self.block,
            self.chunk,
            self.times.bucket,
            b1,
            self.preemptions,
            len(self.times.memo),
            self.times.weights,
        )
