"""What the sanitizer reports: findings that name both instructions, their pipes, the cycles they ran,
the buffer and the bytes — as data (``to_json``) and as text for people (``format``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from isa import Pipe, SourceLoc
from isa.records import record

# Finding kinds.
RACE = "race"
UNINIT = "uninitialized-read"
OUT_OF_BOUNDS = "out-of-bounds"
MISALIGNED = "misaligned"
DOUBLE_SET = "double-set"
EVENT_RANGE = "event-id-range"
LEFT_SET = "flag-left-set"
DEADLOCK = "deadlock"

ERROR, WARNING = "error", "warning"

#: Hazard names, by (first access writes, second access writes) in the order the program intends.
HAZARDS = {(True, False): "RAW", (False, True): "WAR", (True, True): "WAW"}
HAZARD_WORDS = {"RAW": "read-after-write", "WAR": "write-after-read", "WAW": "write-after-write"}
#: A race's hint in lab mode (``SanitizerReport.for_lab``): where to look, not what to change.
LAB_HINT = "lab mode, no fix given: which flag should order these two accesses, and why does it not?"


@record
class InstrRef:
    """One instruction of one core, as the report shows it: where it is, what it says, when it ran.

    ``start``/``end`` are the cycles it ran (``None`` if it never ran, e.g. after a deadlock).
    """

    core: int
    index: int
    pipe: Pipe
    text: str
    loc: SourceLoc | None = None
    start: int | None = None
    end: int | None = None

    @property
    def where(self) -> str:
        """``file.s:12`` when the instruction came from assembly, else ``core 0 #12`` (stream index)."""
        return str(self.loc) if self.loc else f"core {self.core} #{self.index}"

    @property
    def cycles(self) -> str:
        if self.start is None:
            return "never finished"
        return f"cycle {self.start}" if self.end == self.start else f"cycles {self.start}-{self.end}"

    def to_json(self) -> dict:
        return {
            "core": self.core,
            "index": self.index,
            "pipe": self.pipe.value,
            "text": self.text,
            "file": self.loc.file if self.loc else None,
            "line": self.loc.line if self.loc else None,
            "start": self.start,
            "end": self.end,
        }


@record
class Finding:
    """One problem. ``instrs`` are the instructions involved (a race has two: the one the program
    means to go first, then the other); ``ops`` says what each did there (``read``/``write``/``set``/…).
    ``lo``/``hi`` is the byte range ``[lo, hi)`` inside ``buffer`` and ``nbytes`` how many bytes in it
    are involved (fewer than ``hi - lo`` for strided accesses)."""

    kind: str
    severity: str
    message: str
    instrs: tuple[InstrRef, ...] = ()
    ops: tuple[str, ...] = ()
    buffer: str | None = None
    lo: int | None = None
    hi: int | None = None
    nbytes: int | None = None
    hazard: str | None = None
    detail: tuple[str, ...] = ()
    hint: str | None = None

    @property
    def first_cycle(self) -> int:
        starts = [i.start for i in self.instrs if i.start is not None]
        return min(starts) if starts else 1 << 62

    def format(self) -> str:
        head = f"{self.severity}: {self.message}"
        if self.buffer is not None and self.lo is not None:
            n = self.nbytes if self.nbytes is not None else self.hi - self.lo
            head += f"\n  {self.buffer}, bytes {self.lo:#x}..{self.hi - 1:#x} ({n} byte{'s' if n != 1 else ''})"
        lines = [head]
        width = max((len(i.where) for i in self.instrs), default=0)
        ops = self.ops or ("",) * len(self.instrs)
        opw = max((len(o) for o in ops), default=0)
        cores = len({i.core for i in self.instrs}) > 1
        for ins, op in zip(self.instrs, ops):
            op = f"{op:<{opw}} " if opw else ""
            unit = f"core {ins.core} {ins.pipe.label:<8}" if cores else f"{ins.pipe.label:<8}"
            lines.append(f"  {op}{unit} {ins.where:<{width}}  {ins.text:<52} {ins.cycles}")
        lines += [f"  {d}" for d in self.detail]
        if self.hint:
            lines.append(f"  hint: {self.hint}")
        return "\n".join(lines)

    def to_json(self) -> dict:
        return {
            "kind": self.kind,
            "severity": self.severity,
            "message": self.message,
            "hazard": self.hazard,
            "instructions": [
                {**i.to_json(), "op": op} for i, op in zip(self.instrs, self.ops or ("",) * len(self.instrs))
            ],
            "buffer": self.buffer,
            "lo": self.lo,
            "hi": self.hi,
            "bytes": self.nbytes,
            "detail": list(self.detail),
            "hint": self.hint,
        }


@dataclass
class SanitizerReport:
    """Everything one sanitized run found. Empty (``clean``) for a correct program."""

    findings: list[Finding] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.findings

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == ERROR]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == WARNING]

    def of_kind(self, *kinds: str) -> list[Finding]:
        return [f for f in self.findings if f.kind in kinds]

    @property
    def races(self) -> list[Finding]:
        return self.of_kind(RACE)

    def for_lab(self) -> SanitizerReport:
        """The same findings, each race without the hint that says how to fix it (``run-asm --sanitize
        --lab``): what races — the hazard, both instructions with their lines, pipes and cycles, what
        happened in this run — but finding the cure is left to the student."""
        return SanitizerReport([replace(f, hint=LAB_HINT) if f.kind == RACE else f for f in self.findings])

    def summary(self) -> str:
        if self.clean:
            return "sanitizer: no races, no flag misuse, no bad accesses"
        counts: dict[str, int] = {}
        for f in self.findings:
            counts[f.kind] = counts.get(f.kind, 0) + 1
        parts = ", ".join(f"{n} {k}" for k, n in counts.items())
        e, w = len(self.errors), len(self.warnings)
        return f"sanitizer: {e} error{'s' * (e != 1)}, {w} warning{'s' * (w != 1)} ({parts})"

    def format(self, limit: int = 50) -> str:
        """The report as text: a summary line, then up to ``limit`` findings (all of them in JSON)."""
        lines = [self.summary()]
        for f in self.findings[:limit]:
            lines += ["", f.format()]
        if len(self.findings) > limit:
            lines += ["", f"… and {len(self.findings) - limit} more (see --json for all)"]
        return "\n".join(lines) + "\n"

    def to_json(self) -> dict:
        return {
            "clean": self.clean,
            "errors": len(self.errors),
            "warnings": len(self.warnings),
            "findings": [f.to_json() for f in self.findings],
        }

    def __str__(self) -> str:
        return self.format().rstrip("\n")
