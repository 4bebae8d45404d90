"""The report's HTML: one self-contained page (Plotly's script, styles, data and the viewer inlined).

Plotly's script (4.8 MB, most of a report) is inlined gzip-compressed and base64-encoded (2.0 MB): the page
unpacks it with the browser's own ``DecompressionStream`` and runs it, then draws the scenes and plots. The
report stays one file that opens offline, at less than half the size.
"""

from __future__ import annotations

import base64
import gzip
import html
import math

from .scene_data import Numbers, to_json
from .viewer_js import ERROR_HOOK_JS, PLOTLY_LOADER_JS, VIEWER_JS

STYLE = """
body { font-family: system-ui, sans-serif; margin: 0 auto; max-width: 1280px; padding: 0 16px; color: #222; }
h1 { font-size: 1.4em; margin: 14px 0 4px; } h2 { font-size: 1.15em; margin: 22px 0 6px; border-bottom: 1px solid #ddd; }
.meta { color: #555; font-size: 0.9em; } .status-ok { color: #2a7d2a; } .status-bad { color: #b22222; }
.viewer { border: 1px solid #ccc; border-radius: 6px; padding: 6px; margin: 8px 0; flex: 1 1 560px; min-width: 0; }
.viewer h3 { font-size: 1em; margin: 2px 4px 6px; } .plot3d { height: 560px; }
.controls { display: flex; gap: 10px; align-items: center; padding: 4px; font-size: 0.9em; }
.controls input[type=range] { flex: 1; } .time { min-width: 9em; font-variant-numeric: tabular-nums; }
.events { font-size: 0.85em; color: #555; padding: 0 4px; } .row { display: flex; gap: 10px; flex-wrap: wrap; }
table { border-collapse: collapse; font-size: 0.88em; } td, th { border-bottom: 1px solid #eee; padding: 3px 10px; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; } pre { background: #f6f6f6; padding: 8px; overflow-x: auto; font-size: 0.8em; }
img.plot { max-width: 100%; } #diffspace-errors:empty { display: none; } #diffspace-errors { color: #b22222; }
"""

SPEEDS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0)
PLAY_SECONDS = 10.0  # the default speed plays a run in about this long


def _speed_options(duration: float) -> str:
    wanted = duration / PLAY_SECONDS if duration > 0 else 1.0
    default = min(SPEEDS, key=lambda s: abs(math.log(s / wanted)))
    return "".join(f'<option value="{s}"{" selected" if s == default else ""}>{s:g}x</option>' for s in SPEEDS)


def viewer_html(index: int, scene: dict, heading: str) -> str:
    times = scene["times"].values
    duration = float(times[-1] - times[0]) if len(times) else 0.0
    events = "; ".join(f"{label} at t = {t:.4g} s" for t, label in scene["events"])
    return (f'<div class="viewer" data-scene="{index}"><h3>{html.escape(heading)}</h3>'
            f'<div class="plot3d"></div><div class="controls"><button class="play">play</button>'
            f'<input type="range" min="0" max="0" value="0" step="1" aria-label="time">'
            f'<span class="time">t = {times[0] if len(times) else 0:.4f} s</span>'
            f'<label>speed <select class="speed">{_speed_options(duration)}</select></label></div>'
            f'<div class="events">{html.escape(events)}</div></div>')


def packed(script: str) -> str:
    """``script`` gzip-compressed (no timestamp: the same report twice is the same file) and base64-encoded."""
    return base64.b64encode(gzip.compress(script.encode(), 9, mtime=0)).decode()


def page_html(title: str, body: str, scenes: list[dict], figures: list[dict], plotly_js: str) -> str:
    """The whole page; ``body`` is trusted HTML built by the writer."""
    data = to_json({"scenes": scenes, "figures": figures}).replace("</", "<\\/")
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<style>{STYLE}</style><script>{ERROR_HOOK_JS}</script>"
            f'<script type="application/octet-stream" id="diffspace-plotly">{packed(plotly_js)}</script>'
            f"<script>{PLOTLY_LOADER_JS}</script></head><body>"
            f'<pre id="diffspace-errors"></pre>{body}'
            f'<script type="application/json" id="diffspace-data">{data}</script>'
            f"<script>window.diffspacePlotly.then(() => {{{VIEWER_JS}}});</script>"
            f"<script>(function(){{const p=document.getElementById('diffspace-errors');"
            f"p.textContent=window.diffspaceErrors.join('\\n');}})();</script></body></html>\n")


__all__ = ["Numbers", "packed", "page_html", "viewer_html"]
