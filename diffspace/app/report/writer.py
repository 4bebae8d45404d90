"""``DIR/report.html`` from a results directory: what the run left there, drawn in one self-contained page.

The writer reads only the directory (so every command, and ``diffspace view``, use the same path):

* ``scene.npz`` (and ``<case>/scene.npz`` of studies, ``baseline/`` and ``optimum/`` of optimisations): the 3-D
  scenes the scenarios built from their outcomes (:mod:`diffspace.io.scene`), animated side by side;
* ``*.plot.json``: the plots as data (interactive), and any PNG without one (as a picture);
* ``summary.json``: the summary table, units read from the keys' unit suffixes;
* ``manifest.json``: command, scenario, version, time and config hash; the config itself when the caller passes
  it. URDF files among ``robot_files`` lend their ``<visual>`` meshes to the robot links they name.
"""

from __future__ import annotations

import html
import json
import time
from pathlib import Path

from ...core.status import ConfigError
from ...io.scene import Scene, load_scene
from ...io.tables import dump_toml
from ...io.urdf import load_visuals
from .figures import figure_specs, images_without_spec, plotly_figure
from .page import page_html, viewer_html
from .scene_data import scene_payload
from .summary_table import summary_html

REPORT = "report.html"
SCENE_FILE = "scene.npz"


def _scenes(directory: Path) -> list[tuple[str, Path]]:
    found = [("", directory / SCENE_FILE)] if (directory / SCENE_FILE).is_file() else []
    found += [(p.parent.name, p) for p in sorted(directory.glob(f"*/{SCENE_FILE}"))]
    return found


def _visuals(robot_files) -> tuple[dict, list[str]]:
    visuals, problems = {}, []
    for path in robot_files:
        if Path(path).suffix.lower() == ".urdf" and Path(path).is_file():
            try:
                found, skipped = load_visuals(path)
            except ConfigError as err:
                found, skipped = {}, [str(err)]
            visuals.update(found)
            problems += skipped
    return visuals, problems


def _plots_html(directory: Path, figures: list, label: str) -> str:
    parts = []
    for name, spec in figure_specs(directory):
        parts.append(f'<div class="figure" data-figure="{len(figures)}" title="{html.escape(label + name)}"></div>')
        figures.append(plotly_figure(spec))
    for png in images_without_spec(directory):
        import base64

        data = base64.b64encode(png.read_bytes()).decode()
        parts.append(f'<img class="plot" alt="{html.escape(png.name)}" src="data:image/png;base64,{data}">')
    return "".join(parts)


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def _provenance(manifest: dict, config: dict | None) -> str:
    rows = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(str(v))}</td></tr>" for k, v in manifest.items())
    text = f"<table>{rows}</table>"
    if config is not None:
        text += f"<h3>config</h3><pre>{html.escape(dump_toml(config))}</pre>"
    return text


def write_report(directory: Path, config: dict | None = None, robot_files=(), title: str | None = None) -> Path:
    """Write ``directory/report.html`` from the results in ``directory`` (see the module docstring); returns its
    path. ``config``: the run's config (shown under provenance); ``robot_files``: files the config names (URDF
    visuals)."""
    directory = Path(directory)
    manifest = _read_json(directory / "manifest.json")
    summary = _read_json(directory / "summary.json")
    title = title or f"diffspace {manifest.get('command', 'run')}: {manifest.get('scenario', directory.name)}"
    visuals, problems = _visuals(robot_files)
    scenes, figures, body = [], [], [f"<h1>{html.escape(title)}</h1>",
                                      f'<div class="meta">{html.escape(_meta_line(manifest, summary))}</div>']
    viewers = []
    for label, path in _scenes(directory):
        scene: Scene = load_scene(path).with_visuals(visuals)
        payload = scene_payload(scene)
        viewers.append(viewer_html(len(scenes), payload, f"{label + ': ' if label else ''}{scene.title}"))
        scenes.append(payload)
    if viewers:
        body.append('<h2>3-D view</h2><div class="meta">drag to orbit, scroll to zoom; <code>#t=1.5</code> at the end '
                    'of the address opens the view at t = 1.5 s</div><div class="row">' + "".join(viewers) + "</div>")
    if problems:
        body.append("<div class='meta'>visuals not drawn (primitives instead): "
                    + html.escape("; ".join(problems)) + "</div>")
    body.append("<h2>Summary</h2>" + summary_html(summary))
    body.append("<h2>Plots</h2>" + _plots_html(directory, figures, ""))
    for sub in sorted(p for p in directory.iterdir() if p.is_dir() and (any(p.glob("*.plot.json"))
                                                                      or any(p.glob("*.png")))):
        body.append(f"<h2>Plots: {html.escape(sub.name)}</h2>" + _plots_html(sub, figures, sub.name + "/"))
    body.append("<h2>Provenance</h2>" + _provenance(manifest, config))
    from plotly.offline import get_plotlyjs

    out = directory / REPORT
    out.write_text(page_html(title, "".join(body), scenes, figures, get_plotlyjs()), encoding="utf-8")
    return out


def _meta_line(manifest: dict, summary: dict) -> str:
    status = summary.get("status")
    started = manifest.get("started", manifest.get("time"))
    parts = [f"status: {status}" if status else "", f"diffspace {manifest.get('version', '?')}",
             f"run started {started}" if started else "", f"report written {time.strftime('%Y-%m-%dT%H:%M:%S')}"]
    return " | ".join(p for p in parts if p)
