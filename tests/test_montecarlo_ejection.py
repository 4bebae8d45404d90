r"""Monte-Carlo campaign of a rigid (locked) ejection against its closed form.

Every joint locked, the arm is one mass :math:`M` on the separation spring: :math:`v = l\sqrt{k/M}` (energy
:math:`\tfrac12 k l^2 = \tfrac12 M v^2`). With :math:`k \sim N(\mu_k, \sigma_k)` and :math:`l \sim U(a, b)`
independent, :math:`v = l\,g(k)` with :math:`g = \sqrt{k/M}` is a product of independent factors, so

.. math::

    E[v] = E[l]\,E[g],\quad E[v^2] = E[l^2]\,\mu_k/M,\quad
    V_l = \operatorname{Var}(l)\,E[g]^2,\quad V_k = E[l]^2\operatorname{Var}(g),\quad
    V_{lk} = \operatorname{Var}(l)\operatorname{Var}(g),

:math:`S_l = V_l/V`, :math:`S_k = V_k/V`, :math:`S_{T,l} = \operatorname{Var}(l)\,E[g^2]/V`,
:math:`S_{T,k} = E[l^2]\operatorname{Var}(g)/V` with :math:`E[g^2] = \mu_k/M`,
:math:`\operatorname{Var}(g) = \mu_k/M - E[g]^2`, :math:`E[l] = (a+b)/2`, :math:`E[l^2] = (a^2+ab+b^2)/3`;
:math:`E[\sqrt k]` by 200-point Gauss-Hermite quadrature (exact to round-off for this smooth integrand).
Local sensitivities at the means: :math:`\partial v/\partial k\,\sigma_k = \tfrac{E[l]}{2\sqrt{\mu_k M}}\sigma_k`,
:math:`\partial v/\partial l\,\sigma_l = \sqrt{\mu_k/M}\,(b-a)/\sqrt{12}`.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from diffspace.app.cli import main
from experiments.references.locked_ejection import METRIC, closed_form, locked_campaign_config, locked_mass


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_locked_ejection_campaign_matches_the_closed_form(tmp_path):
    config = tmp_path / "locked.toml"
    config.write_text(locked_campaign_config(samples=4096))
    out = tmp_path / "mc"
    assert main(["montecarlo", str(config), "--out", str(out), "--quiet"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    mass = locked_mass()
    truth = closed_form(mass)
    rows = np.genfromtxt(out / "results.csv", delimiter=",", names=True, dtype=None, encoding="utf-8")
    v, k, l = rows[METRIC], rows["ejectionspring_stiffness_N_m"], rows["ejectionspring_compression_m"]
    assert summary["failed_runs"] == 0
    assert np.max(np.abs(v / (l * np.sqrt(k / mass)) - 1.0)) < 1e-6  # every run: the solver's tolerance
    draws = v[np.isin(rows["matrix"], ["A", "B"])]
    s = summary["outputs"][METRIC]
    m4 = np.mean((draws - draws.mean()) ** 4)
    assert abs(s["mean"] - truth["mean"]) < 4.0 * s["std"] / np.sqrt(draws.size)
    assert abs(s["std"] ** 2 - truth["std"] ** 2) < 4.0 * np.sqrt((m4 - s["std"] ** 4) / draws.size)
    for which in ("first", "total"):
        for key, value in truth[f"sobol_{which}"].items():
            low, high = summary[f"sobol_{which}_ci"][METRIC][key]
            assert low <= value <= high, (which, key, low, value, high)
    for key, value in truth["local_sensitivity"].items():
        assert summary["local_sensitivity"][METRIC][key] == pytest.approx(value, rel=1e-6)
