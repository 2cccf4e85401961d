"""The replication group: its members, its elections, and running it.

Reading order: ``membership`` (a group, its nodes and their states:
master, replica, unknown), ``elections`` (Paxos rounds, durable acceptor
state, the rule for the winner), ``driver`` (a master and replicas on the
in-memory network, pumped), ``failover`` (every node in memory: elections,
failover, rejoin), ``node`` (one node as a process over TCP, for ``minidb
group``).

Invariant: at most one master per election term; only the master writes
and allocates VLSNs.
"""
