"""Output restitution e vs input coefficient c for every contact damping law (Cai et al. 2021, Aerospace 8:381).

Each point is a full simulated impact (:func:`diffspace.contact.output_restitution`; frictionless, unit
mass/stiffness/speed: for the Hunt-Crossley family e depends on c only). The Hunt-Crossley-family curves
are checked against the closed form chi (1 + e) = ln((1 + chi) / (1 - chi e)); Kelvin-Voigt is shown for
n = 1.5 (secant-stiffness calibration) and n = 1 (checked against Schwager & Poeschel 2007).

Writes ``experiments/results/restitution_map.png`` and ``.json``.
Run: ``python experiments/restitution_map.py``
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

import diffspace  # noqa: F401  (float64)
from diffspace.contact import (
    CHI_LAWS,
    ContactLaw,
    kelvin_voigt_damping_ratio,
    kelvin_voigt_restitution_linear,
    output_restitution,
    restitution_closed_form,
)

RESULTS = Path(__file__).resolve().parent / "results"


def main() -> dict:
    cs = np.round(np.linspace(0.05, 1.0, 20), 4)
    out: dict = {"c": cs.tolist(), "laws": {}}
    for law in [name for name in CHI_LAWS if name != "hertz"]:
        e = np.asarray(output_restitution(law, cs))
        chi = np.asarray(ContactLaw(1.0, 1.5, cs, law=law).chi())
        ref = np.array([restitution_closed_form(float(x)) for x in chi])
        out["laws"][law] = {"e_out": e.tolist(), "e_closed_form": ref.tolist(),
                            "max_abs_error_vs_closed_form": float(np.max(np.abs(e - ref)))}
    for n in (1.5, 1.0):
        e = np.asarray(output_restitution("kelvin_voigt", cs, exponent=n))
        entry = {"e_out": e.tolist()}
        if n == 1.0:
            ref = np.array([kelvin_voigt_restitution_linear(float(z)) for z in kelvin_voigt_damping_ratio(cs)])
            entry.update(e_closed_form=ref.tolist(), max_abs_error_vs_closed_form=float(np.max(np.abs(e - ref))))
        out["laws"][f"kelvin_voigt_n{n:g}"] = entry
    zq = np.array(out["laws"]["zhiying_qishao"]["e_closed_form"])
    fine = np.linspace(0.05, 0.999, 400)
    chi = np.asarray(ContactLaw(1.0, 1.5, fine, law="zhiying_qishao").chi())
    zq_fine = np.array([restitution_closed_form(float(x)) for x in chi]) - fine
    crossing = fine[np.argmin(np.abs(zq_fine[fine < 0.9]))]
    out["zhiying_qishao_notes"] = {
        "e_out_at_c_0.55": float(np.interp(0.55, cs, zq)),
        "c_where_e_out_equals_c": float(crossing),
        "max_abs_e_minus_c_for_c_in_0.3_1": float(np.max(np.abs(zq_fine[fine >= 0.3]))),
    }

    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "restitution_map.json").write_text(json.dumps(out, indent=2) + "\n")
    _plot(cs, out)
    for name, entry in out["laws"].items():
        err = entry.get("max_abs_error_vs_closed_form")
        e = np.asarray(entry["e_out"])
        check = f"  |sim - closed form| <= {err:.1e}" if err is not None else ""
        print(f"{name:22s} e(0.3)={np.interp(0.3, cs, e):.4f} e(0.55)={np.interp(0.55, cs, e):.4f} "
              f"e(0.8)={np.interp(0.8, cs, e):.4f}{check}")
    print("ZQ:", out["zhiying_qishao_notes"])
    return out


def _plot(cs, out) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 5.0))
    ax.plot([0, 1], [0, 1], "k:", lw=1, label="e = c")
    for name, entry in out["laws"].items():
        ax.plot(cs, entry["e_out"], "o-", ms=3, lw=1.2, label=name)
    ax.set_xlabel("input restitution c")
    ax.set_ylabel("output restitution e = v_out / v_in (simulated)")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title("Damping laws: simulated restitution vs input c")
    fig.tight_layout()
    fig.savefig(RESULTS / "restitution_map.png", dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
