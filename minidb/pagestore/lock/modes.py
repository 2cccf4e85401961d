"""Lock modes, and Shore's two tables: compatibility and supremum.

Shore's lock manager knows seven modes (Gray & Reuter, *Transaction
Processing*, ch. 7-8)::

    NL   no lock
    IS   intention shared       (some descendant will be read)
    IX   intention exclusive    (some descendant will be changed)
    SH   shared                 (read the object and, implicitly, all below it)
    SIX  shared + intention exclusive
    UD   update                 (read now, probably change later)
    EX   exclusive

**Compatibility** (Gray & Reuter table 7.11, Shore's ``lock_base_t::compat``):
``compatible(requested, granted)`` says whether a request for ``requested``
can be granted while another transaction holds ``granted``. Rows are the
requested mode, columns the granted one::

    req\\granted  NL  IS  IX  SH  SIX UD  EX
    NL           +   +   +   +   +   +   +
    IS           +   +   +   +   +   -   -
    IX           +   +   +   -   -   -   -
    SH           +   +   -   +   -   -   -
    SIX          +   +   -   -   -   -   -
    UD           +   -   -   +   -   -   -
    EX           +   -   -   -   -   -   -

The table is **not symmetric** at SH/UD: a UD request is granted next to a
held SH (``compatible(UD, SH)``), but a new SH request is refused next to a
held UD (``not compatible(SH, UD)``). The updater got in while readers were
there; new readers are kept out so that, when the old ones leave, it can
convert to EX without starving. (IS and UD conflict both ways.)

**Supremum** (Gray & Reuter figure 8.6, the *lock conversion matrix*; Shore's
``lock_base_t::supr``): a transaction that holds ``a`` and asks for ``b``
converts to ``supremum(a, b)``, the weakest mode at least as strong as both::

    supr   NL  IS  IX  SH  SIX UD  EX
    NL     NL  IS  IX  SH  SIX UD  EX
    IS     IS  IS  IX  SH  SIX UD  EX
    IX     IX  IX  IX  SIX SIX EX  EX
    SH     SH  SH  SIX SH  SIX UD  EX
    SIX    SIX SIX SIX SIX SIX SIX EX
    UD     UD  UD  EX  UD  SIX UD  EX
    EX     EX  EX  EX  EX  EX  EX  EX

For example a holder of SH asking for IX gets SIX; a holder of UD asking
for IX gets EX. A request is *covered* (nothing to do) when
``supremum(held, wanted) == held``: SIX covers SH and IX, EX covers all.

**Implicit parent modes** (the hierarchy, see :mod:`.lockid`): before a lock
on a child, the transaction holds each ancestor in ``parent_mode(child)``:
IS for a child IS or SH, IX for a child IX, SIX, UD or EX. An ancestor held
in SH, SIX or UD implicitly grants IS and SH on everything below it; an
ancestor held in EX grants every mode below it (:func:`implicitly_covers`).
"""

from __future__ import annotations

import enum


class LockMode(enum.Enum):
    """The seven lock modes, in Shore's order (the index into both tables)."""

    NL = 0
    IS = 1
    IX = 2
    SH = 3
    SIX = 4
    UD = 5
    EX = 6

    def __str__(self) -> str:
        return self.name

    @staticmethod
    def compatible(requested: "LockMode", granted: "LockMode") -> bool:
        """Whether ``requested`` may be granted while another transaction holds ``granted``."""
        return _COMPAT[requested._i][granted._i]  # type: ignore[attr-defined]

    @staticmethod
    def supremum(a: "LockMode", b: "LockMode") -> "LockMode":
        """The mode a holder of ``a`` converts to when it asks for ``b``."""
        return _SUPR[a._i][b._i]  # type: ignore[attr-defined]


NL, IS, IX, SH, SIX, UD, EX = (LockMode.NL, LockMode.IS, LockMode.IX, LockMode.SH, LockMode.SIX,
                               LockMode.UD, LockMode.EX)
MODES: tuple[LockMode, ...] = tuple(LockMode)

# As in Shore, a mode is the index of its row and column in both tables: each
# member keeps it as ``_i``.
for _mode in MODES:
    _mode._i = _mode.value  # type: ignore[attr-defined]

_T, _F = True, False
# compat[requested][granted]; rows and columns in MODES order.
COMPAT_TABLE: tuple[tuple[bool, ...], ...] = (
    #  NL  IS  IX  SH  SIX UD  EX       (granted)
    (_T, _T, _T, _T, _T, _T, _T),  # NL  (requested)
    (_T, _T, _T, _T, _T, _F, _F),  # IS
    (_T, _T, _T, _F, _F, _F, _F),  # IX
    (_T, _T, _F, _T, _F, _F, _F),  # SH
    (_T, _T, _F, _F, _F, _F, _F),  # SIX
    (_T, _F, _F, _T, _F, _F, _F),  # UD
    (_T, _F, _F, _F, _F, _F, _F),  # EX
)
SUPREMUM_TABLE: tuple[tuple[LockMode, ...], ...] = (
    #  NL   IS   IX   SH   SIX  UD   EX
    (NL, IS, IX, SH, SIX, UD, EX),  # NL
    (IS, IS, IX, SH, SIX, UD, EX),  # IS
    (IX, IX, IX, SIX, SIX, EX, EX),  # IX
    (SH, SH, SIX, SH, SIX, UD, EX),  # SH
    (SIX, SIX, SIX, SIX, SIX, SIX, EX),  # SIX
    (UD, UD, EX, UD, SIX, UD, EX),  # UD
    (EX, EX, EX, EX, EX, EX, EX),  # EX
)
_COMPAT = COMPAT_TABLE
_SUPR = SUPREMUM_TABLE

_PARENT = {NL: NL, IS: IS, SH: IS, IX: IX, SIX: IX, UD: IX, EX: IX}
_READS = frozenset((IS, SH))


def compatible(requested: LockMode, granted: LockMode) -> bool:
    """Whether ``requested`` may be granted while another transaction holds ``granted``.

    Not symmetric: ``compatible(UD, SH)`` but not ``compatible(SH, UD)``.
    """
    return _COMPAT[requested._i][granted._i]  # type: ignore[attr-defined]


def supremum(a: LockMode, b: LockMode) -> LockMode:
    """The weakest mode at least as strong as ``a`` and ``b`` (symmetric)."""
    return _SUPR[a._i][b._i]  # type: ignore[attr-defined]


def covers(held: LockMode, wanted: LockMode) -> bool:
    """Whether holding ``held`` already gives everything ``wanted`` would."""
    return _SUPR[held._i][wanted._i] is held  # type: ignore[attr-defined]


def parent_mode(child: LockMode) -> LockMode:
    """The mode each ancestor must be held in before a child lock in ``child``.

    ``parent_mode[child IS or SH] = IS``; ``parent_mode[child IX or SIX or UD
    or EX] = IX``; ``parent_mode[NL] = NL`` (Shore's three rules).
    """
    return _PARENT[child]


def implicitly_covers(ancestor: LockMode, child: LockMode) -> bool:
    """Whether an ancestor held in ``ancestor`` already grants ``child`` on a descendant.

    EX on an ancestor covers every mode below it; SH, SIX and UD (which read
    the whole subtree) cover IS and SH below. Intention modes cover nothing.
    """
    if ancestor is EX:
        return True
    return ancestor in (SH, SIX, UD) and child in _READS


def escalation_mode(parent_held: LockMode) -> LockMode:
    """The mode a parent is escalated to: SH over readers (parent IS), EX otherwise."""
    return SH if parent_held in (IS, SH) else EX


def format_table(kind: str = "compat") -> str:
    """One of the two tables as text, rows and columns in Shore's order."""
    header = "       " + " ".join(f"{m.name:<4}" for m in MODES)
    rows = [header]
    for a in MODES:
        if kind == "compat":
            cells = ["+" if compatible(a, b) else "-" for b in MODES]
        elif kind == "supremum":
            cells = [supremum(a, b).name for b in MODES]
        else:
            raise ValueError(f"kind must be 'compat' or 'supremum', not {kind!r}")
        rows.append(f"{a.name:<6} " + " ".join(f"{c:<4}" for c in cells))
    return "\n".join(line.rstrip() for line in rows)
