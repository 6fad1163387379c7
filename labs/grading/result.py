"""What grading one notebook gives: a score per exercise, the written answers, flags, the time taken."""

from __future__ import annotations

from dataclasses import dataclass, field

from isa import DsasimError

#: An exercise's status: passed; failed (a wrong answer, or the student's code raised); not done (the
#: student's own ``NotImplementedError``, or no answer); not reached (the notebook stopped before it).
STATUSES = ("passed", "failed", "not done", "not reached")


class GradingError(DsasimError):
    """A grading run that cannot start: no such folder, no notebooks, a bad option."""


@dataclass
class ExerciseResult:
    id: str
    #: what the exercise asks for, from its grader
    what: str
    max_points: float
    status: str = "not reached"
    points: float = 0.0
    #: the first failure, as the student would see it (empty when passed)
    message: str = ""


@dataclass
class WrittenAnswer:
    """A question graded by hand: its id, and what the student wrote (empty if nothing)."""

    id: str
    text: str
    #: the points given by hand (``--manual``), and the question's maximum (None: not graded yet)
    points: float | None = None
    max_points: float | None = None


#: Kinds of flag for the instructor's eyes only: a suspicion, which may name another student ("copy: the same file as
#: ada's"), is never written where the student reads (the feedback files, Gradescope's visible output).
INSTRUCTOR_ONLY = frozenset({"copy", "other variant", "tampered", "unknown student", "bad id"})


@dataclass
class Submission:
    """One graded notebook."""

    student: str
    path: str
    lab: int
    exercises: list[ExerciseResult] = field(default_factory=list)
    written: list[WrittenAnswer] = field(default_factory=list)
    #: why an instructor should look at this notebook: "time limit", "crashed", "tampered", "error", ...
    flags: list[str] = field(default_factory=list)
    seconds: float = 0.0
    #: of ``seconds``, the time the notebook's own code took (what ``--timeout`` limits)
    code_seconds: float = 0.0
    variant_seed: int | None = None

    @property
    def score(self) -> float:
        return sum(e.points for e in self.exercises) + sum(w.points or 0 for w in self.written)

    @property
    def max_score(self) -> float:
        return sum(e.max_points for e in self.exercises) + sum(w.max_points or 0 for w in self.written)

    def flag(self, kind: str, detail: str = "") -> None:
        text = f"{kind}: {detail}" if detail else kind
        if text not in self.flags:
            self.flags.append(text)

    @property
    def student_flags(self) -> list[str]:
        """The flags the student may read (``time limit``, ``crashed``, ``error``, ...): not the instructor's
        suspicions, which may name other students (:data:`INSTRUCTOR_ONLY`)."""
        return [f for f in self.flags if f.split(":")[0] not in INSTRUCTOR_ONLY]

    @property
    def flag_kinds(self) -> list[str]:
        """The kinds of flags raised ("tampered", "time limit", ...), each once, in order."""
        return list(dict.fromkeys(f.split(":")[0] for f in self.flags))
