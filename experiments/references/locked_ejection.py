"""The locked (rigid) ejection's Monte-Carlo campaign and its closed form: ``v = l sqrt(k/M)`` with ``k`` normal
and ``l`` uniform (the derivation is in ``tests/test_montecarlo_ejection.py``). Shared by that test and
``experiments/montecarlo_closed_form.py``."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from diffspace.scenarios import load_scenario

ROOT = Path(__file__).resolve().parents[2]
K_MEAN, K_STD, L_LOW, L_HIGH = 812.7, 16.0, 0.085, 0.087
METRIC = "separation_velocity_m_s"


def locked_campaign_config(samples: int, chunk_size: int = 256, bootstrap: int = 1000,
                           confidence: float = 0.999) -> str:
    """The air-table ejection with every joint locked, ``k`` and ``l`` dispersed (Saltelli runs)."""
    base = (ROOT / "configs" / "ejection_plane.toml").read_text()
    base = base.replace('path = "robots/', f'path = "{ROOT / "configs" / "robots"}/').replace(
        'model = "hybrid"', 'model = "locked"')
    return base + f"""
[montecarlo]
samples = {samples}
seed = 1
outputs = ["{METRIC}"]
sensitivity = ["local", "sobol"]
chunk_size = {chunk_size}
bootstrap = {bootstrap}
confidence = {confidence}
[montecarlo.dispersions]
"ejection.spring_stiffness_N_m" = {{distribution = "normal", std = {K_STD}}}
"ejection.spring_compression_m" = {{distribution = "uniform", lower = {L_LOW}, upper = {L_HIGH}}}
"""


def closed_form(mass: float, mu_k=K_MEAN, sigma_k=K_STD, a=L_LOW, b=L_HIGH) -> dict:
    """Mean, standard deviation, Sobol indices and local sensitivities of ``v = l sqrt(k / M)`` (docstring)."""
    nodes, weights = np.polynomial.hermite.hermgauss(200)
    g1 = float(np.sum(weights * np.sqrt(mu_k + np.sqrt(2.0) * sigma_k * nodes)) / np.sqrt(np.pi) / np.sqrt(mass))
    g2 = mu_k / mass
    l1, l2, var_l = 0.5 * (a + b), (a * a + a * b + b * b) / 3.0, (b - a) ** 2 / 12.0
    var_g = g2 - g1 * g1
    variance = l2 * g2 - (l1 * g1) ** 2
    k, l = "ejection.spring_stiffness_N_m", "ejection.spring_compression_m"
    return {"mean": l1 * g1, "std": float(np.sqrt(variance)),
            "sobol_first": {k: l1 * l1 * var_g / variance, l: var_l * g1 * g1 / variance},
            "sobol_total": {k: l2 * var_g / variance, l: var_l * g2 / variance},
            "local_sensitivity": {k: l1 / (2.0 * np.sqrt(mu_k * mass)) * sigma_k, l: np.sqrt(g2) * np.sqrt(var_l)}}


def locked_mass() -> float:
    scenario = load_scenario(ROOT / "configs" / "ejection_plane.toml", ['friction.model="locked"'])
    return float(scenario.robot.total_mass)
