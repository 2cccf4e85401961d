"""``minidb generate --engine log|logstore --envs N --ops N OUT``: environments for the pipeline.

Writes ``N`` environments (``OUT/env-00``, ...) with seeded random workloads
(see :mod:`minidb.spark.generate`); ``--group K`` makes the first ``K`` of
them the nodes of a replication group. The same seed writes the same bytes.
"""

from __future__ import annotations

from minidb.cli.common import non_negative_int, path_arg, positive_int


def register(commands) -> None:
    from minidb.spark.generate import GenerateRequest, generators

    defaults = GenerateRequest("", 1, 1)
    engines = generators()
    p = commands.add_parser("generate", help="write environments with seeded random workloads")
    p.add_argument("out", type=path_arg, metavar="OUT", help="directory to write the environments into")
    p.add_argument("--engine", required=True, choices=sorted(engines),
                   help="; ".join(f"{g.name}: {g.help}" for g in engines.values()))
    p.add_argument("--envs", type=positive_int, required=True, help="how many environments")
    p.add_argument("--ops", type=positive_int, required=True, help="operations per environment")
    p.add_argument("--group", type=non_negative_int, default=None, metavar="K",
                   help="the first K environments form a replication group "
                        "(default: min(3, envs) when the engine supports groups and envs >= 2)")
    p.add_argument("--seed", type=int, default=defaults.seed, help=f"random seed (default {defaults.seed})")
    p.add_argument("--file-max", type=positive_int, default=defaults.file_max, metavar="BYTES",
                   help=f"log file size limit (default {defaults.file_max})")
    p.add_argument("--ckpt-every", type=positive_int, default=defaults.ckpt_every, metavar="OPS",
                   help=f"mean operations between checkpoints (default {defaults.ckpt_every})")
    p.set_defaults(run=run)


def run(args) -> int:
    from minidb.spark.generate import GenerateRequest, generate, generators

    group = args.group
    if group is None:
        supports = generators()[args.engine].supports_group
        group = min(3, args.envs) if supports and args.envs >= 2 else 0
    request = GenerateRequest(args.out, args.envs, args.ops, seed=args.seed, group=group,
                              file_max=args.file_max, ckpt_every=args.ckpt_every)
    print(generate(args.engine, request).summary())
    return 0
