"""Screenshots of every scenario's report for the documentation (docs/index.md, the scenario pages), by the same
headless-Chromium path as the tests
(tests/test_report.py), with each report's size and the time it took to write.

    python experiments/report_screenshots.py [scenario ...]     # default: all ten

Runs each shipped config (long ones shortened with the overrides below) cold (``--no-cache``), writes
``docs/images/report_<scenario>.png`` (the page at the time given, 1280 x 800, reduced to a 256-colour palette)
and ``docs/images/report_sizes.json`` (config, overrides, run time with the compile, report write time and size).
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

from PIL import Image

from diffspace.app.cli import main
from diffspace.app.report import write_report
from diffspace.app.report.browser import find_chromium, render

ROOT = Path(__file__).resolve().parent.parent
IMAGES = ROOT / "docs" / "images"
WINDOW = (1280, 800)
CASES = {  # scenario: (config, overrides, time shown [s]; 1e9: the last frame)
    "ejection": ("ejection_plane.toml", [], 1.0),
    "free_floating": ("free_floating.toml", [], 2.0),
    "impact": ("impact_airtable.toml", [], 0.007),
    "capture": ("capture.toml", [], 0.11),
    "capture_snare": ("capture_snare_optimize.toml", [], 0.2),
    "snare": ("snare_capture.toml", [], 1e9),
    "snare_closing": ("snare_closing.toml", ["drive.duration_s=1.0", "closing.end_time_s=1.2"], 1.2),
    "deployment": ("deployment_scheme1.toml", ["drive.duration_s=2.0", "simulation.settle_s=0.5"], 1.5),
    "unilateral": ("unilateral_contact.toml", [], 3.0),
    "flexible_arm": ("flexible_arm.toml", [], 1e9),
}


def small_png(path: Path) -> None:
    """The screenshot reduced to a 256-colour palette (a few tens of kB)."""
    with Image.open(path) as image:
        reduced = image.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
    reduced.save(path, optimize=True)


def one(name: str, work: Path, browser: str) -> dict:
    config, overrides, shown = CASES[name]
    out = work / name
    start = time.perf_counter()
    sets = [a for o in overrides for a in ("--set", o)]
    assert main(["run", str(ROOT / "configs" / config), "--out", str(out), "--quiet", "--no-cache", *sets]) == 0
    run_s = time.perf_counter() - start
    start = time.perf_counter()
    write_report(out)  # again, timed alone (the run wrote it with its config)
    write_s = time.perf_counter() - start
    report = out / "report.html"
    png = IMAGES / f"report_{name}.png"
    text = render(browser, report, f"#t={shown!r}", png, window=WINDOW)
    if 'data-ready="1"' not in text or '<pre id="diffspace-errors"></pre>' not in text:
        raise RuntimeError(f"{name}: the report did not draw cleanly")
    small_png(png)
    return {"config": config, "overrides": overrides, "run_s": round(run_s, 1), "report_write_s": round(write_s, 2),
            "report_MB": round(report.stat().st_size / 1e6, 2), "screenshot_kB": round(png.stat().st_size / 1e3)}


if __name__ == "__main__":
    browser = find_chromium()
    if browser is None:
        sys.exit("no Chromium found (apt-get install chromium)")
    names = sys.argv[1:] or list(CASES)
    table_path = IMAGES / "report_sizes.json"
    table = json.loads(table_path.read_text()) if table_path.is_file() else {}
    with tempfile.TemporaryDirectory() as work:
        for name in names:
            table[name] = one(name, Path(work), browser)
            print(name, table[name], flush=True)
            table_path.write_text(json.dumps({k: table[k] for k in CASES if k in table}, indent=2) + "\n")
