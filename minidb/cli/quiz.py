"""``minidb quiz``: practice and exam problems from seeded runs of the engine, answered by the engine.

``minidb quiz --list`` names the topics (:data:`minidb.quiz.TOPICS`), one a
line with what each asks. ``minidb quiz --topic T --seed N`` prints topic T's
problem for seed N (plain text and Markdown tables; the same seed always
gives the same text, another seed another problem); ``--answers`` adds the
worked answer, computed by running the engine's own code on the same
scenario. A lecturer takes seeds 1..20 for a problem set and any other seed
for the exam; a student takes any seed for practice and checks the answer.

An unknown topic, or a seed outside 0 .. 2**63-1, is one line and exit code 2::

    $ minidb quiz --topic aries --seed 1
    minidb quiz: error: unknown topic 'aries': one of aries-analysis, ... (minidb quiz --list)
"""

from __future__ import annotations

import sys

from minidb.cli.common import seed_arg
from minidb.errors import UserError
from minidb.quiz import quiz, topic_lines


def register(commands) -> None:
    p = commands.add_parser("quiz", help="practice and exam problems, answered by the engine")
    p.add_argument("--list", action="store_true", help="list the topics, one a line, with what each asks")
    p.add_argument("--topic", metavar="T", help="the topic (see --list)")
    p.add_argument("--seed", type=seed_arg, default=1, help="which problem of the topic (default 1; 0 to 2**63-1)")
    p.add_argument("--answers", action="store_true", help="print the worked answer after the problem")
    p.set_defaults(run=run)


def run(args) -> int:
    if args.list:
        print("\n".join(topic_lines()))
        return 0
    if args.topic is None:
        raise UserError("name a topic with --topic T (minidb quiz --list), or ask for --list")
    sys.stdout.write(quiz(args.topic, args.seed).text(answers=args.answers))
    return 0
