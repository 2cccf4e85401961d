"""What the generator tests of every engine share: a request, and reading what was written."""

from pathlib import Path

from minidb.io import OSDisk
from minidb.log import LogManager
from minidb.spark.generate import GenerateRequest


def request(out, **changes):
    options = dict(envs=4, ops=300, seed=3, group=3, file_max=8 * 1024, ckpt_every=50)
    options.update(changes)
    return GenerateRequest(str(out), **options)


def entries(env):
    """Every entry of a generated environment, as minidb.log's reader reads them."""
    log = LogManager(OSDisk(env.path, readonly=True), readonly=True)
    found = list(log.scan())
    log.close()
    return found


def file_bytes(root):
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(Path(root).rglob("*.jdb"))}
