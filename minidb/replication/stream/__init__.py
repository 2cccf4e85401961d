"""The replication stream: the master's log sent to each replica by VLSN, and the acks back.

Reading order: ``wire`` (the framed message format), ``network`` (two
transports with one interface, and the handshake), ``feeder`` (the master's
side: reads the log forward by VLSN and sends it), ``replica`` (replays what
arrives, with the master's VLSNs and transaction ids), ``durability`` (sync
and ack policies), ``ack`` (commits waiting for their acks).

Invariants: a replica applies entries in VLSN order with no gap; a commit
that waits for acks returns only when enough replicas hold it durably.
"""
