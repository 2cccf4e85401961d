"""The buffer pool: frames, latches, clock replacement, the write-ahead rule.

=================  ===========================================================
``bufferpool.py``  frames, fix/unfix, recovery LSNs, the write-ahead rule, the cleaner
``clock.py``       clock replacement (a pure function over frame states)
``latch.py``       SH/EX latches
``walrule.py``     the write-ahead rule (a pure function over page LSNs)
=================  ===========================================================
"""
