"""Exercise 14a: the matchpoint search (see README.md).

A log is a list of rows ``(vlsn, type_name, checksum, lsn)``, newest first; the feeder is a dict
``vlsn -> (type_name, checksum, lsn)`` wrapped so that the tests see every question it was asked.
"""


SYNC = frozenset({"Commit", "Abort", "Matchpoint", "TermStart"})


class Feeder:
    """The master's side: answers by VLSN and remembers the questions."""

    def __init__(self, entries):
        self.entries = entries
        self.asked = []

    def __call__(self, vlsn):
        self.asked.append(vlsn)
        return self.entries.get(vlsn)


def test_the_readme_worked_example(impl):
    mine = [(10, "LN_TX", 0xAAAA, 1000), (9, "Commit", 0x1111, 900), (8, "LN_TX", 0xBBBB, 800),
            (7, "Matchpoint", 0x2222, 700), (6, "Commit", 0x3333, 600), (5, "LN_TX", 0xCCCC, 500)]
    feeder = Feeder({9: ("Commit", 0x9999, 940), 7: ("Matchpoint", 0x7777, 720), 6: ("Commit", 0x3333, 610),
                     8: ("LN_TX", 0xBBBB, 810), 10: ("LN_TX", 0xAAAA, 1010), 5: ("LN_TX", 0xCCCC, 510)})
    assert impl.find_matchpoint(mine, feeder) == (6, 3)
    assert feeder.asked == [9, 7, 6]


def test_logs_that_agree_end_at_the_newest_sync_point(impl):
    mine = [(4, "Commit", 44, 400), (3, "LN_TX", 33, 300), (2, "Commit", 22, 200)]
    feeder = Feeder({4: ("Commit", 44, 400), 3: ("LN_TX", 33, 300), 2: ("Commit", 22, 200)})
    assert impl.find_matchpoint(mine, feeder) == (4, 1)
    assert feeder.asked == [4]


def test_the_lsns_differ_between_nodes_but_the_checksums_decide(impl):
    """The same entries sit at other offsets in the feeder's log: still a match."""
    mine = [(3, "Abort", 30, 0x1_0000_0300), (2, "Commit", 20, 0x1_0000_0200)]
    feeder = Feeder({3: ("Abort", 30, 0x2_0000_0040), 2: ("Commit", 20, 0x2_0000_0020)})
    assert impl.find_matchpoint(mine, feeder) == (3, 1)


def test_equal_lsns_do_not_make_a_match(impl):
    """At VLSN 5 both logs hold a Commit at the same offset, with different content."""
    mine = [(5, "Commit", 50, 500), (3, "Commit", 30, 300)]
    feeder = Feeder({5: ("Commit", 51, 500), 3: ("Commit", 30, 310)})
    assert impl.find_matchpoint(mine, feeder) == (3, 2)


def test_a_diverging_record_is_not_a_sync_point(impl):
    """The newest entries are records the feeder holds too: never a matchpoint, never asked about."""
    mine = [(7, "LN", 70, 700), (6, "DEL_LN_TX", 60, 600), (5, "Commit", 50, 500)]
    feeder = Feeder({7: ("LN", 70, 710), 6: ("DEL_LN_TX", 60, 610), 5: ("Commit", 50, 510)})
    assert impl.find_matchpoint(mine, feeder) == (5, 1)
    assert feeder.asked == [5]


def test_a_vlsn_the_feeder_does_not_hold_is_passed_over(impl):
    """The rejoining node is ahead: the feeder has nothing at VLSN 8 yet."""
    mine = [(8, "Commit", 80, 800), (6, "Matchpoint", 60, 600)]
    feeder = Feeder({6: ("Matchpoint", 60, 640)})
    assert impl.find_matchpoint(mine, feeder) == (6, 2)


def test_logs_that_share_nothing_need_a_network_restore(impl):
    mine = [(3, "Commit", 31, 300), (2, "LN_TX", 21, 200), (1, "Abort", 11, 100)]
    feeder = Feeder({3: ("Commit", 32, 300), 2: ("LN_TX", 21, 200), 1: ("Abort", 12, 100)})
    assert impl.find_matchpoint(mine, feeder) == (None, 2)
    assert impl.find_matchpoint([], Feeder({})) == (None, 0)


def test_nothing_older_than_the_matchpoint_is_asked_or_read(impl):
    """The candidates are an iterator over a long log: the search stops at the matchpoint."""
    read = []

    def log():
        for vlsn in range(1000, 0, -1):
            read.append(vlsn)
            yield (vlsn, "Commit" if vlsn % 3 == 0 else "LN_TX", vlsn, vlsn * 10)

    feeder = Feeder({v: ("Commit", v if v <= 990 else -v, v * 10 + 5) for v in range(1, 1001)})
    assert impl.find_matchpoint(log(), feeder) == (990, 4)
    assert feeder.asked == [999, 996, 993, 990] and read[-1] == 990


def test_a_sync_point_of_another_type_at_that_vlsn_does_not_match(impl):
    mine = [(4, "Matchpoint", 40, 400), (2, "Commit", 20, 200)]
    feeder = Feeder({4: ("Commit", 41, 400), 2: ("Commit", 20, 200)})
    assert impl.find_matchpoint(mine, feeder) == (2, 2)


# -- typical wrong solutions (exercises/test_stubs_fail.py runs each: every one must fail a test) ----------------
def _search(candidates, feeder, *, by_lsn=False, any_type=False, first_only=False, ask_everything=False,
            oldest_first=False):
    """A plain correct search, with a switch for each typical mistake."""
    rows = list(candidates)[::-1] if oldest_first else candidates
    examined = 0
    for vlsn, type_name, checksum, lsn in rows:
        if type_name not in SYNC and not any_type:
            if ask_everything:
                feeder(vlsn)
            continue
        examined += 1
        theirs = feeder(vlsn)
        same = theirs is not None and (theirs[2] == lsn if by_lsn else theirs[1] == checksum)
        if same:
            return vlsn, examined
        if first_only:
            break
    return None, examined


MUTANTS = {
    "compares_lsns_instead_of_checksums": {"find_matchpoint": lambda c, f: _search(c, f, by_lsn=True)},
    "accepts_a_record_as_matchpoint": {"find_matchpoint": lambda c, f: _search(c, f, any_type=True)},
    "stops_at_the_first_candidate": {"find_matchpoint": lambda c, f: _search(c, f, first_only=True)},
    "asks_the_feeder_about_every_entry": {"find_matchpoint": lambda c, f: _search(c, f, ask_everything=True)},
    "searches_oldest_first": {"find_matchpoint": lambda c, f: _search(c, f, oldest_first=True)},
}


def random_cases(rng):
    """For ``minidb grade``: two random logs that agree up to a point, then diverge (other checksums,
    other types, other LSNs for the same entry), the feeder missing some VLSNs."""
    for _ in range(300):
        top = rng.randrange(1, 30)
        agree = rng.randrange(0, top + 1)
        mine, theirs = [], {}
        for vlsn in range(top, 0, -1):
            kind = rng.choice(["Commit", "Abort", "Matchpoint", "LN_TX", "LN_TX"])
            mine.append((vlsn, kind, vlsn * 7, vlsn * 100))
            if rng.random() < 0.1:
                continue  # the feeder does not hold it
            lsn = vlsn * 100 + rng.choice([0, 0, 16])
            if vlsn <= agree:
                theirs[vlsn] = (kind, vlsn * 7, lsn)
            else:
                theirs[vlsn] = rng.choice([(kind, -vlsn, lsn), ("Commit", vlsn * 7 + 1, lsn), (kind, vlsn * 7, lsn)])
        yield "find_matchpoint", (mine, Feeder(theirs)), {}
