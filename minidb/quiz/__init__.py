"""Practice and exam problems, each built from a seeded run of the engine and answered by the engine itself.

A *topic* (:data:`TOPICS`) turns a seed into a :class:`Quiz`: the problem,
as plain text with Markdown tables, small enough to solve by hand (a dozen
or two log entries, a handful of locks or mappings), and its worked answer,
step by step. Neither is written by hand: the topic runs a small seeded
workload on the real engine (a :class:`~minidb.io.SimDisk` that crashes, a
log-store environment, a replication group), prints what the run left as
the problem, then lets the engine's own code decide (the page store's
analysis, redo and undo passes; the lock manager; the checkpointer's dirty
map; the cleaner's verdicts; the VLSN bucket's puts; syncup's matchpoint
search) and prints its trace as the answer.

Invariants:

- the same topic and seed give the same text, byte for byte (the workloads
  are seeded, clocks fixed, no wall time enters the text);
- the answer is computed, never stored: whoever doubts it can run the engine
  on the same scenario (the tests do exactly that, independently of the
  answer's text);
- a bad request (an unknown topic, a seed outside 0 .. 2**63-1) is a
  :class:`~minidb.errors.UserError` naming what was wrong.

``quiz("aries-analysis", 1).problem`` is the workload of a page store that
crashed and its log from the master checkpoint on; ``.answer`` is
analysis' trace and the two tables it rebuilt. :func:`topic_lines` is what ``minidb quiz --list`` prints.

This package drives the engines and replication from above, like
:mod:`minidb.crashtest`; no engine imports it.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable

from minidb.errors import UserError

SEED_LIMIT = 2**63  # a seed prints, stores and passes to other programs as a signed 64-bit integer


@dataclass(frozen=True)
class Quiz:
    """One problem and its worked answer."""

    topic: str
    seed: int
    problem: str
    answer: str

    def text(self, answers: bool = False) -> str:
        head = f"# {self.topic}, seed {self.seed}\n\n{self.problem.rstrip()}\n"
        return head + (f"\n## Answer\n\n{self.answer.rstrip()}\n" if answers else "")


@dataclass(frozen=True)
class Topic:
    name: str
    asks: str  # one line: what the problem asks
    module: str  # the module minidb.quiz.<module> holds its builder, build_<name, "-" as "_">(seed) -> Quiz

    def builder(self) -> Callable[[int], Quiz]:
        return getattr(importlib.import_module(f"minidb.quiz.{self.module}"), "build_" + self.name.replace("-", "_"))


TOPICS: dict[str, Topic] = {t.name: t for t in (
    Topic("aries-analysis", "after a crash, the transaction table and dirty page table (recovery LSNs) that "
                            "analysis rebuilds from this log", "aries"),
    Topic("aries-redo", "which entries redo applies and which it skips, and why (not dirty, before the "
                        "recovery LSN, page LSN newer)", "aries"),
    Topic("aries-undo", "in what order undo visits the losers' entries, and which CLRs (with undo-next) "
                        "it writes", "aries"),
    Topic("lock-hierarchy", "given the locks held, is a record lock granted or does it wait, and what is "
                            "requested at each level (intention locks on the parents)", "locks"),
    Topic("je-checkpoint", "given the dirty INs and BINs by level, which nodes the checkpoint logs, and "
                           "with which provisional flag", "logstore"),
    Topic("je-cleaner", "which entries of this log file are live and which obsolete, and what the "
                        "cleaner migrates", "logstore"),
    Topic("vlsn-bucket", "given a stride and a sequence of puts, which mappings the VLSN bucket keeps",
          "replication"),
    Topic("matchpoint", "given a master's and a replica's logs, where the matchpoint is and what the "
                        "replica rolls back", "replication"),
)}


def check_seed(seed: int) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < SEED_LIMIT:
        raise UserError(f"bad seed {seed!r}: a seed is an integer from 0 to 2**63-1")
    return seed


def topic(name: str) -> Topic:
    found = TOPICS.get(name)
    if found is None:
        raise UserError(f"unknown topic {name!r}: one of {', '.join(TOPICS)} (minidb quiz --list)")
    return found


def quiz(name: str, seed: int) -> Quiz:
    """The problem of topic ``name`` for ``seed``, with its answer computed by the engine."""
    return topic(name).builder()(check_seed(seed))


def topic_lines() -> list[str]:
    width = max(len(name) for name in TOPICS)
    return [f"{t.name:<{width}}  {t.asks}" for t in TOPICS.values()]


__all__ = ["Quiz", "Topic", "TOPICS", "quiz", "topic", "topic_lines", "check_seed", "SEED_LIMIT"]
