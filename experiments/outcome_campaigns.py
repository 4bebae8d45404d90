"""Random capture and impact campaigns: how many runs end in each status and each physical outcome.

* ``capture``: ``configs/capture.toml``, approach speed 0.01-0.15 m/s, both approach angles +-30 deg,
  restitution 0.2-0.9 (seeded);
* ``impact``: ``configs/impact_airtable.toml``, approach speed 0.01-0.5 m/s, masses 5-100 kg each, friction
  coefficient 0-0.5 (seeded).

Before the outcomes existed, a slow oblique capture that never touched was the failure ``no_event`` and an
impact pair that friction pressed together ran out of its event budget (``event_budget``); now both are
outcomes of valid runs. Writes ``experiments/results/outcome_campaigns/<label>.json``. Run:
``python experiments/outcome_campaigns.py [N_capture] [N_impact] [label]`` (default 256, 128, ``after``).
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

from diffspace.app.commands import load
from diffspace.core.status import Status
from diffspace.design.evaluate import evaluate_cases

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "experiments" / "results" / "outcome_campaigns"
CHUNK = 64

CAMPAIGNS = {
    "capture": ("capture.toml", {"capture.approach_speed_m_s": (0.01, 0.15), "capture.approach_angles_deg[0]": (-30, 30),
                                 "capture.approach_angles_deg[1]": (-30, 30), "contact.restitution_c": (0.2, 0.9)}),
    "impact": ("impact_airtable.toml", {"impact.approach_speed_m_s": (0.01, 0.5), "impact.mass1_kg": (5.0, 100.0),
                                        "impact.mass2_kg": (5.0, 100.0), "friction.mu": (0.0, 0.5)}),
}


def campaign(name: str, n: int, seed: int) -> dict:
    """Run ``n`` random cases of one campaign in chunks; status and outcome counts, and the inputs of the runs
    that failed."""
    config, ranges = CAMPAIGNS[name]
    loaded = load(ROOT / "configs" / config, [])
    builder = loaded.builder()
    rng = np.random.default_rng(seed)
    cases = [{key: float(rng.uniform(*bounds)) for key, bounds in ranges.items()} for _ in range(n)]
    status, outcomes, start = [], [], time.perf_counter()
    for first in range(0, n, CHUNK):
        result = evaluate_cases(builder, cases[first:first + CHUNK], CHUNK)
        status += [int(s) for s in result.status]
        outcomes += list(getattr(result, "outcomes", [""] * len(result.status)))
    failed = [dict(cases[i], status=Status(s).label) for i, s in enumerate(status) if s != Status.OK]
    return {"config": config, "cases": n, "seed": seed, "ranges": ranges,
            "status_counts": dict(Counter(Status(s).label for s in status)),
            "outcome_counts": dict(Counter(o for o in outcomes if o)), "wall_s": time.perf_counter() - start,
            "not_ok_cases": failed[:50]}


def main(n_capture: int = 256, n_impact: int = 128, label: str = "after") -> None:
    results = {"capture": campaign("capture", n_capture, 0), "impact": campaign("impact", n_impact, 1)}
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"{label}.json").write_text(json.dumps(results, indent=2) + "\n")
    for name, r in results.items():
        print(f"{name}: {r['cases']} cases, statuses {r['status_counts']}, outcomes {r['outcome_counts']}, "
              f"{r['wall_s']:.0f} s")


if __name__ == "__main__":
    args = sys.argv[1:]
    main(*(int(a) for a in args[:2]), *args[2:3])
