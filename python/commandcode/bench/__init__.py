"""Benchmark helpers shipped with commandcode.

This package owns the synthetic-session generator (:mod:`commandcode.bench.generate`)
used by the benchmarks in ``benches/`` and by the user-facing ``commandcode bench``
command. It does not import the native extension.
"""
