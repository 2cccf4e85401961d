"""Generating environments for the pipeline to read: a registry of generators.

Classes study many environments at once (one per student, or one per node of
a replication group), so the pipeline needs many logs with real content.
``minidb generate --engine NAME --envs N --ops N OUT`` writes ``N``
environments, ``OUT/env-00``, ``OUT/env-01``, ..., each a directory of log
files, with a seeded random workload of about ``N`` operations each: the same
seed gives the same bytes.

Each engine that can produce a workload registers a :class:`Generator` in
:data:`GENERATORS` under its ``--engine`` name (a module with a ``run``
function and one :func:`register_generator` call, imported in
:func:`_load_builtin`; ``supports_group=True`` when it can write a
replication group):

``log``       the shared log alone (:mod:`minidb.spark.gen_log`), writing the
              test entry types of :mod:`minidb.spark.logdef`: transactions,
              checkpoints, and a replication group whose nodes share a VLSN
              stream, with a gap, a duplicate and a divergence planted;
``logstore``  the log store itself (:mod:`minidb.spark.gen_logstore`): records
              in transactions, eviction, checkpoints, and a group of
              replicated environments that diverges on one node.

A generator returns a :class:`GenerateReport`: what it wrote, environment by
environment, which the tests use as ground truth for the analyses.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from minidb.errors import UserError
from minidb.io import OSDisk, created
from minidb.log import LSN, log_file_numbers
from minidb.log.manager import MIN_FILE_MAX


@dataclass(frozen=True)
class GenerateRequest:
    """What to generate. ``group`` environments (the first ones) form a
    replication group; ``ckpt_every`` is the mean number of operations between
    checkpoints; ``payload`` the range of record data sizes in bytes."""

    out: str
    envs: int
    ops: int
    seed: int = 1
    group: int = 0
    file_max: int = 32 * 1024
    ckpt_every: int = 150
    payload: tuple[int, int] = (16, 160)


@dataclass
class TxnRecord:
    """One transaction as written to one environment."""

    txn_id: int
    first_lsn: LSN
    last_lsn: LSN
    entries: int = 0  # updates plus the commit or abort entry
    outcome: str = "open"  # open | commit | abort


@dataclass
class CheckpointRecord:
    ckpt_id: int
    start_lsn: LSN
    end_lsn: LSN | None = None


@dataclass
class EnvReport:
    """One generated environment."""

    name: str
    path: str
    role: str = "standalone"  # standalone | node
    entries: int = 0  # every entry, FileHeaders included
    files: int = 0
    bytes: int = 0
    types: Counter = field(default_factory=Counter)
    txns: dict[int, TxnRecord] = field(default_factory=dict)
    checkpoints: list[CheckpointRecord] = field(default_factory=list)
    vlsns: list[int] = field(default_factory=list)  # in log order, repeats included


@dataclass
class GroupReport:
    """The replication group: its nodes and the faults written on purpose."""

    nodes: list[str]
    diverging_node: str | None = None
    first_divergence: int | None = None  # the first VLSN whose entry differs there
    gaps: dict[str, list[int]] = field(default_factory=dict)  # env -> VLSNs never logged
    duplicates: dict[str, list[int]] = field(default_factory=dict)  # env -> VLSNs logged twice
    last_vlsn: int = 0


@dataclass
class GenerateReport:
    engine: str
    request: GenerateRequest
    envs: list[EnvReport]
    group: GroupReport | None = None

    def env(self, name: str) -> EnvReport:
        return next(e for e in self.envs if e.name == name)

    def summary(self) -> str:
        total = sum(e.bytes for e in self.envs)
        lines = [
            f"generated {len(self.envs)} environments in {self.request.out} "
            f"(engine {self.engine}, seed {self.request.seed}, {self.request.ops} operations each): "
            f"{sum(e.entries for e in self.envs):,} entries in {sum(e.files for e in self.envs)} files, "
            f"{total:,} bytes"
        ]
        for env in self.envs:
            outcomes = Counter(t.outcome for t in env.txns.values())
            lines.append(
                f"  {env.name}: {env.role}, {env.files} files, {env.entries:,} entries, "
                f"{len(env.txns)} transactions ({outcomes['commit']} committed, {outcomes['abort']} aborted, "
                f"{outcomes['open']} open), {len(env.checkpoints)} checkpoint{'' if len(env.checkpoints) == 1 else 's'}"
                + (f", VLSNs {min(env.vlsns)}..{max(env.vlsns)}" if env.vlsns else "")
            )
        if self.group is not None:
            g = self.group
            lines.append(f"  replication group: {', '.join(g.nodes)}; VLSNs 1..{g.last_vlsn}")
            for env, vlsns in g.gaps.items():
                lines.append(f"    {env} never logged VLSN {', '.join(map(str, vlsns))} (a gap)")
            for env, vlsns in g.duplicates.items():
                lines.append(f"    {env} logged VLSN {', '.join(map(str, vlsns))} twice (a duplicate)")
            if g.diverging_node is not None:
                lines.append(f"    {g.diverging_node} diverges from VLSN {g.first_divergence} on")
        return "\n".join(lines)


@dataclass(frozen=True)
class Generator:
    name: str
    help: str
    run: Callable[[GenerateRequest], GenerateReport]
    supports_group: bool = False


GENERATORS: dict[str, Generator] = {}


def register_generator(generator: Generator) -> None:
    if generator.name in GENERATORS and GENERATORS[generator.name] != generator:
        raise ValueError(f"a generator named {generator.name!r} is already registered")
    GENERATORS[generator.name] = generator


def _load_builtin() -> None:
    import minidb.spark.gen_log  # noqa: F401  (registers "log")
    import minidb.spark.gen_logstore  # noqa: F401  (registers "logstore")


def generators() -> dict[str, Generator]:
    _load_builtin()
    return GENERATORS


# Bounds on a request. Measured: the log store writes about 600 bytes per operation at 1.3 ms each
# (the log alone 110 bytes at 0.2 ms), so MAX_TOTAL_OPS is about 1.2 GB of logs and 45 minutes;
# the Spark benchmark uses 8 x 110,000.
MAX_ENVS = 1_000
MAX_OPS = 1_000_000
MAX_TOTAL_OPS = 2_000_000


def check_request(engine: str, request: GenerateRequest) -> Generator:
    """The generator registered as ``engine``, if it can do ``request``; else a UserError."""
    known = generators()
    if engine not in known:
        raise UserError(f"unknown engine {engine!r} for generate (known: {', '.join(sorted(known))})")
    generator = known[engine]
    if request.envs < 1 or request.ops < 1:
        raise UserError(f"need at least one environment and one operation (got --envs {request.envs} --ops {request.ops})")
    if request.envs > MAX_ENVS or request.ops > MAX_OPS or request.envs * request.ops > MAX_TOTAL_OPS:
        raise UserError(f"at most {MAX_ENVS:,} environments, {MAX_OPS:,} operations each and {MAX_TOTAL_OPS:,} "
                        f"in all (got --envs {request.envs:,} --ops {request.ops:,})")
    if request.group:
        if not generator.supports_group:
            raise UserError(f"engine {engine!r} cannot generate a replication group yet")
        if not 2 <= request.group <= request.envs:
            raise UserError(f"a replication group needs 2 to {request.envs} environments (got --group {request.group})")
    if request.file_max < MIN_FILE_MAX:
        raise UserError(f"file_max {request.file_max} is too small (at least {MIN_FILE_MAX} bytes)")
    low, high = request.payload
    if not 0 <= low <= high:
        raise UserError(f"bad payload size range {low}..{high}")
    return generator


def generate(engine: str, request: GenerateRequest) -> GenerateReport:
    """Run the generator registered as ``engine``; bad requests are UserErrors."""
    return check_request(engine, request).run(request)


def env_name(index: int) -> str:
    return f"env-{index:02d}"


def new_env_disk(request: GenerateRequest, index: int) -> OSDisk:
    """The directory of environment ``index`` under ``request.out``, which must not hold a log yet."""
    path = os.path.join(request.out, env_name(index))
    disk = OSDisk(path, create=True)
    if log_file_numbers(disk):
        raise UserError(f"{path}: already holds a log; generate into an empty directory")
    return disk


def count_files(report: EnvReport, disk: OSDisk) -> EnvReport:
    """Finish an environment's report once its log is closed: files, their FileHeaders, bytes."""
    numbers = log_file_numbers(disk)
    report.files = len(numbers)
    report.types["FileHeader"] += len(numbers)
    report.entries = sum(report.types.values())
    report.bytes = sum(disk.size(n) for n in disk.list() if n.endswith(".jdb"))
    return report


def write_environments(engine: str, request: GenerateRequest,
                       replication_group: Callable[[GenerateRequest], tuple[list[EnvReport], GroupReport]],
                       standalone: Callable[[GenerateRequest, int], EnvReport]) -> GenerateReport:
    """The group's nodes first (when asked for), then standalone environments up to ``request.envs``."""
    created.makedirs(request.out)
    envs: list[EnvReport] = []
    group = None
    if request.group:
        envs, group = replication_group(request)
    for index in range(len(envs), request.envs):
        envs.append(standalone(request, index))
    return GenerateReport(engine, request, envs, group)
