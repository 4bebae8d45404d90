"""HTML reports of every command: ``DIR/report.html``, one self-contained file (Plotly's script, styles, data and
geometry inlined; no network request, no server) with the run's 3-D scene animated over time, its plots, the
summary table and its provenance.

Entry point for any command that leaves a results directory: ``write_report(directory, config=..., robot_files=...)``
(see :mod:`.writer` for what it reads there). ``open_report`` opens one in the default browser.
"""

from .writer import REPORT, SCENE_FILE, write_report

__all__ = ["REPORT", "SCENE_FILE", "write_report"]
