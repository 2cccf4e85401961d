"""Syncup: a replica joining a master finds their last common entry and rolls back past it.

Reading order: ``syncup`` (the matchpoint search by an LSN-neutral
checksum), ``rollback`` (undoing the replica's entries after the
matchpoint: RollbackStart/End, INVISIBLE entries, finished by recovery if
a crash interrupts it, by hard recovery if it crosses a checkpoint),
``periods`` (the rollback periods: the checkpoints recovery may not use).

Invariant: nothing a master's commit acknowledged by a majority is ever
rolled back; a rollback of more committed transactions than
``txn_rollback_limit`` is refused (a network restore is needed).
"""
