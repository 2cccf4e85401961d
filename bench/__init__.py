"""minidb's benchmarks: measurements only, written to ``BENCHMARKS.md``.

Each benchmark is a module with a ``run() -> str`` function that measures
and returns its Markdown section; ``python -m bench [NAME...]`` (``make
bench``) runs them and rewrites their sections of ``BENCHMARKS.md``. Nothing
here asserts on timings: machines differ, and a benchmark that fails on a
slow day teaches nothing. See :mod:`bench.report` for the shared helpers.
"""
