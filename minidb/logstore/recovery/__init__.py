"""Recovery of a log store environment (JE's ``RecoveryManager``), a module per pass.

:mod:`.manager` names the passes (:meth:`RecoveryManager.recover`);
:mod:`.reading` reads and checks the log since the last checkpoint;
:mod:`.trees` places the INs logged non-provisionally; :mod:`.redo` finds the
losers, redoes LNs and undoes the losers; :mod:`.info` is what recovery
found and did, phase by phase.
"""

from minidb.logstore.recovery.info import RecoveryInfo, RecoveryPhase
from minidb.logstore.recovery.manager import RECOVERY_MANAGER, RecoveryManager
from minidb.logstore.recovery.reading import node_head

__all__ = ["RecoveryManager", "RECOVERY_MANAGER", "RecoveryInfo", "RecoveryPhase", "node_head"]
