"""``diffspace sweep``: the ``[sweep]`` table, its chunked resumable run and its plots."""

from .command import check_disk, run_sweep
from .spec import SweepSpec, parse_sweep

__all__ = ["SweepSpec", "check_disk", "parse_sweep", "run_sweep"]
