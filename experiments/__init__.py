"""The experiments: scripts that reproduce the studies and benchmarks (``python experiments/<script>.py``, results
in ``experiments/results/``) and ``references``, the independent reference models the tests import as
``experiments.references``."""
