"""Exercise 13a, reference: minidb's own answers (not a second implementation).

``required_acks`` is :func:`minidb.replication.stream.durability.required_acks` with the policy given by name
(``ReplicaAckPolicy.required_acks`` calls it for every count of acks); ``count_ack`` is
:func:`minidb.replication.stream.ack.count_ack`, which ``FeederTxns.note_ack`` calls for every ack a feeder
reads.
"""

from __future__ import annotations

from minidb.replication.stream.ack import count_ack
from minidb.replication.stream.durability import required_acks_by_name as required_acks

__all__ = ["required_acks", "count_ack"]
