"""The benchmark suite of issue 11: ``python -m tests.benchmarks [--size smoke|full] [--only
http,export,verify]``. Each section is a module with ``run(size, workdir) -> list[Figure]``
(see ``figures.py``); the runner prints one table and writes it as JSON and ``RESULTS.md``.
Figures are ratios measured side by side in one run, never absolute times."""
