"""The buffer pool: frames, latches, clock replacement, the write-ahead rule.

=================  ===========================================================
``bufferpool.py``  the pool: fix/unfix, recovery LSNs, WAL, the cleaner
``frame.py``       the control blocks a pool keeps, what pictures see
``clock.py``       clock replacement (a pure function over frame states, O(1) amortised)
``latch.py``       SH/EX latches
``walrule.py``     the write-ahead rule (a pure function over page LSNs)
=================  ===========================================================
"""
