"""``minidb generate --engine log|logstore --envs N --ops N OUT``: environments for the pipeline.

Writes ``N`` environments (``OUT/env-00``, ...) with seeded random workloads
(see :mod:`minidb.spark.generate`); ``--group K`` makes the first ``K`` of
them the nodes of a replication group. The same seed writes the same bytes.

``--envs`` is at most :data:`~minidb.spark.generate.MAX_ENVS`, ``--ops`` at
most :data:`~minidb.spark.generate.MAX_OPS`, ``--seed`` below 2**63
(:func:`minidb.cli.common.seed_arg`) and ``--envs`` and ``--ops`` together at most
:data:`~minidb.spark.generate.MAX_TOTAL_OPS` operations: one line and exit
code 2 beyond. OUT is claimed as :mod:`minidb.cli.output` describes: running
the command again on its own output replaces it; any other non-empty
directory is refused.
"""

from __future__ import annotations

from minidb.cli.common import add_impl_option, int_at_least, non_negative_int, path_arg, positive_int, seed_arg
from minidb.cli.output import owned_output


def register(commands) -> None:
    from minidb.spark.generate import MAX_ENVS, MAX_OPS, GenerateRequest, generators

    defaults = GenerateRequest("", 1, 1)
    engines = generators()
    p = commands.add_parser("generate", help="write environments with seeded random workloads")
    p.add_argument("out", type=path_arg, metavar="OUT", help="directory to write the environments into")
    p.add_argument("--engine", required=True, choices=sorted(engines),
                   help="; ".join(f"{g.name}: {g.help}" for g in engines.values()))
    p.add_argument("--envs", type=int_at_least(1, MAX_ENVS), required=True,
                   help=f"how many environments (at most {MAX_ENVS:,})")
    p.add_argument("--ops", type=int_at_least(1, MAX_OPS), required=True,
                   help=f"operations per environment (at most {MAX_OPS:,})")
    p.add_argument("--group", type=non_negative_int, default=None, metavar="K",
                   help="the first K environments form a replication group "
                        "(default: min(3, envs) when the engine supports groups and envs >= 2)")
    p.add_argument("--seed", type=seed_arg, default=defaults.seed,
                   help=f"random seed (default {defaults.seed}; 0 to 2**63-1)")
    p.add_argument("--file-max", type=positive_int, default=defaults.file_max, metavar="BYTES",
                   help=f"log file size limit (default {defaults.file_max})")
    p.add_argument("--ckpt-every", type=positive_int, default=defaults.ckpt_every, metavar="OPS",
                   help=f"mean operations between checkpoints (default {defaults.ckpt_every})")
    add_impl_option(p)
    p.set_defaults(run=run)


def run(args) -> int:
    from minidb.spark.generate import GenerateRequest, check_request, generate, generators

    group = args.group
    if group is None:
        supports = generators()[args.engine].supports_group
        group = min(3, args.envs) if supports and args.envs >= 2 else 0
    request = GenerateRequest(args.out, args.envs, args.ops, seed=args.seed, group=group,
                              file_max=args.file_max, ckpt_every=args.ckpt_every)
    check_request(args.engine, request)  # a bad request is refused before the directory is claimed
    with owned_output(args.out, "minidb generate"):
        print(generate(args.engine, request).summary())
    return 0
