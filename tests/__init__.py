"""The test suite, a package: its helpers (``toy_scenario``, ``random_robots``, ``pinocchio_ref``) are imported
relatively, the reference models as ``experiments.references``; run from the repository root with
``python -m pytest`` (pyproject: ``--import-mode=importlib``, so pytest adds nothing to ``sys.path``)."""
