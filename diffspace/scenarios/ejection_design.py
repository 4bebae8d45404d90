"""Ejection design commands: attitude optimisation, friction identification and batched sweeps."""

from __future__ import annotations

from ..config import Field

DESIGN_SECTIONS = {
    "optimize": {
        "objective": Field("str", "velocity", choices=("velocity", "tumbling", "mix")),
        "tumbling_weight_s": Field("float", 0.01, min=0.0, help="mix: J = v_stable - w * |omega| (omega in deg/s)"),
        "n_starts": Field("int", 4, min=1, max=256),
        "steps": Field("int", 40, min=1, max=10_000),
        "learning_rate": Field("float", 0.05, gt=0.0),
        "sweep_samples": Field("int", 256, min=1, max=1_000_000),
        "seed": Field("int", 0),
    },
    "fit": {
        "parameters": Field("any", ["viscous"], help="subset of viscous, coulomb"),
        "initial_viscous_N_m_s_rad": Field("float", 4.8, gt=0.0),
        "initial_coulomb_N_m": Field("float", 1.5, gt=0.0),
    },
    "sweep": {
        "samples": Field("int", 256, min=1),
        "chunk_size": Field("int", 64, min=1),
        "seed": Field("int", 0),
    },
}
