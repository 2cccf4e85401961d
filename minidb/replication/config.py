"""How a node's replication is configured (JE's ``ReplicationConfig``, reduced).

======================  ==========================  =======
setting                 JE parameter                default
======================  ==========================  =======
``txn_rollback_limit``  je.rep.txnRollbackLimit     10
======================  ==========================  =======

``txn_rollback_limit`` is the number of committed transactions a syncup
rollback may undo (:mod:`minidb.replication.syncup.rollback`). A record
written without a transaction and a database's creation each commit by
themselves and count as one. Past the limit the rollback is refused
(:class:`~minidb.replication.errors.RollbackLimitError`, JE's
``RollbackProhibitedException``): so many committed transactions lost
suggest something is wrong with the group, and the node needs a network
restore (or an operator). The VLSN index has its own settings
(:mod:`minidb.replication.vlsn.config`).
"""

from __future__ import annotations

from dataclasses import dataclass

from minidb.errors import UserError

DEFAULT_TXN_ROLLBACK_LIMIT = 10


@dataclass(frozen=True)
class ReplicationConfig:
    txn_rollback_limit: int = DEFAULT_TXN_ROLLBACK_LIMIT

    def __post_init__(self) -> None:
        if not isinstance(self.txn_rollback_limit, int) or self.txn_rollback_limit < 0:
            raise UserError(f"txn_rollback_limit must be a whole number of transactions, at least 0, "
                            f"not {self.txn_rollback_limit!r}")


__all__ = ["ReplicationConfig", "DEFAULT_TXN_ROLLBACK_LIMIT"]
