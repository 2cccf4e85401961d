"""Property-based: the log store against a dict, thousands of operations, a tiny node budget.

Hypothesis drives puts, deletes, transactions that commit or abort, cursor scans, checkpoints (whole,
or stepped with operations in between), and crashes followed by recovery, on an environment whose
node budget is so small that the evictor logs and drops nodes after almost every operation. After
every step the records must equal the model; the tree must stay a B+tree; nothing in use may be
counted obsolete.
"""

from hypothesis import HealthCheck, settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from minidb.io import CrashMode, SimDisk
from minidb.logstore import Environment
from minidb.logstore.tools.verify import live_but_obsolete, verify_tree

from tests.logstore.helpers import small_config

KEYS = st.sampled_from([f"k{i:02d}".encode() for i in range(48)])
VALUES = st.binary(max_size=10)
WRITES = st.lists(st.tuples(KEYS, st.one_of(st.none(), VALUES)), min_size=1, max_size=5)


class LogStoreAgainstADict(RuleBasedStateMachine):
    @initialize(budget=st.sampled_from([4, 6, 9]))
    def open(self, budget):
        self.config = small_config(node_budget=budget, file_max=4096, buffer_size=512, trace=False)
        self.disk = SimDisk("model")
        self.env = Environment.open(self.disk, self.config)
        self.db = self.env.database("t")
        self.model: dict[bytes, bytes] = {}
        self.run = None
        self.operations = 0

    @rule(key=KEYS, value=VALUES)
    def put(self, key, value):
        self.db.put(key, value)
        self.model[key] = value
        self.operations += 1

    @rule(writes=st.lists(st.tuples(KEYS, st.one_of(st.none(), VALUES)), min_size=5, max_size=25))
    def batch(self, writes):
        for key, value in writes:
            if value is None:
                self.db.delete(key)
                self.model.pop(key, None)
            else:
                self.db.put(key, value)
                self.model[key] = value
        self.operations += len(writes)

    @rule(key=KEYS)
    def delete(self, key):
        found = self.db.delete(key)
        assert (found is not None) == (key in self.model)
        self.model.pop(key, None)
        self.operations += 1

    @rule(writes=WRITES, commit=st.booleans())
    def transaction(self, writes, commit):
        txn = self.env.begin()
        mine = dict(self.model)
        for key, value in writes:
            if value is None:
                self.db.delete(key, txn=txn)
                mine.pop(key, None)
            else:
                self.db.put(key, value, txn=txn)
                mine[key] = value
        assert dict(self.db.items(txn=txn)) == mine
        if commit:
            txn.commit()
            self.model = mine
        else:
            txn.abort()
        self.operations += len(writes)

    @rule(key=KEYS)
    def get(self, key):
        assert self.db.get(key) == self.model.get(key)

    @rule(start=KEYS)
    def scan(self, start):
        expected = sorted((k, v) for k, v in self.model.items() if k >= start)
        assert list(self.db.items(start=start)) == expected

    @precondition(lambda self: self.run is None)
    @rule(minimize=st.booleans())
    def checkpoint(self, minimize):
        self.env.checkpoint(minimize_recovery_time=minimize)

    @precondition(lambda self: self.run is None)
    @rule()
    def start_checkpoint(self):
        self.run = self.env.checkpointer.start("stepped")

    @precondition(lambda self: self.run is not None)
    @rule(pauses=st.integers(1, 12))
    def advance_checkpoint(self, pauses):
        for _ in range(pauses):
            self.run.advance()
            if self.run.done:
                self.run = None
                return

    @rule(mode=st.sampled_from(["nothing", "everything"]))
    def crash_and_recover(self, mode):
        self.env.sync()  # whatever was written so far is promised; the crash then loses nothing of it
        self.env.crash(CrashMode.nothing() if mode == "nothing" else CrashMode.everything())
        self.run = None
        self.env = Environment.open(self.disk, self.config)
        self.db = self.env.database("t")
        assert verify_tree(self.env) == [] and live_but_obsolete(self.env) == []

    @invariant()
    def records_equal_the_model(self):
        assert dict(self.db.items()) == self.model

    @invariant()
    def the_cache_stays_within_its_budget(self):
        # Roots are never evicted: the three trees' roots may exceed the budget.
        assert self.env.evictor.resident_count() <= self.config.node_budget + 3

    def teardown(self):
        if getattr(self, "env", None) is not None and not self.env.closed:
            assert verify_tree(self.env) == [] and live_but_obsolete(self.env) == []


LogStoreAgainstADict.TestCase.settings = settings(
    max_examples=45, stateful_step_count=120, deadline=None, derandomize=True, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
test_log_store_against_a_dict = LogStoreAgainstADict.TestCase
