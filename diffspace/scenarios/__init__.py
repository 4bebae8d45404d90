"""Scenarios runnable from the command line.

Each module exposes ``schema() -> config.Schema`` and ``run(cfg, out) -> dict`` and, where it makes sense,
``optimize(cfg, out)``, ``fit(cfg, data_path, out)`` and ``sweep(cfg, out)``. The CLI picks the module by
the scenario section the config contains (see ``diffspace.cli.SCENARIOS``).
"""
