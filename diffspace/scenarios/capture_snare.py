r"""Capture through the snare: the arm's capture rod strikes one wire rope of the target's snare, and
``diffspace optimize`` chooses the contact node and the approach (``[optimize] contact = "snare"`` in a
``[capture]`` config; seed: Cai et al. 2021, Aerospace 8:381, Sections 3.2 and 4.2).

Model (the paper's reduction, Section 3.2 and Eq. (43)): the rope at node ``n`` acts as its virtual spring
``F = k_v(delta) delta + c_v delta_dot`` (polynomial fitted to the static pressing curve of the snare config,
:mod:`diffspace.scenarios.snare_design`), struck by the equivalent mass of the capture

.. math:: m = \frac{m_{arm} m_{target}}{m_{arm} + m_{target}},

with both effective masses taken along the contact normal at the aim point of the ``[capture]`` case
(:meth:`CaptureModel.effective_masses`: the arm with its held joints and base restriction, the 41.7 kg
target with its Table 4 inertia and lever arm). The 1-D impact sees the normal closing speed
``v_n = v (d . (-n_0))`` only, so the two direction angles act through ``v_n``. Touch and release are
Diffrax events of :func:`diffspace.contact.simulate_impact`, so ``jax.grad`` reaches the peak force,
impulse and closing speed. The node is a discrete choice: every node's polynomial is precomputed (one
vmapped set of static solves), and the node index is traced data in the compiled design functions (:func:`snare.node_table`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..io.config import read_toml, validate
from ..status import ConfigError
from ..io.results import print_summary, write_summary
from ..status import SolverFailure
from . import snare
from . import snare_design as sd
from .capture_design import Problem, optimize_approach


def snare_config(spec: dict) -> tuple[dict, Path]:
    """The validated snare config named by ``optimize.snare_config`` (the default lives in ``configs/``) and
    its path."""
    from ..io.packaged import DATA_DIR as CONFIG_DIR

    path = spec["snare_config"]
    path = path if isinstance(path, Path) else CONFIG_DIR / path
    try:
        cfg = validate(read_toml(path), snare.schema(), path.parent)
    except ConfigError as err:
        raise ConfigError(f"optimize.snare_config ({path}): {err}") from None
    snare.check_config(cfg)
    return cfg, path


def snare_problem(case, cfg: dict) -> tuple[Problem, dict]:
    """The capture design :class:`Problem` on the snare, and facts for the summary."""
    from .capture import _direction, _effective_masses

    spec = cfg["optimize"]
    scfg, path = snare_config(spec)
    nodes = spec["snare_nodes"]
    last = scfg["rope"]["n_sections"]
    if not (isinstance(nodes, list) and nodes and all(type(n) is int and 2 <= n <= last for n in nodes)):
        raise ConfigError(f"optimize.snare_nodes: expected a list of interior rope nodes in 2..{last}, got {nodes!r}")
    m_arm, m_target = (float(m) for m in _effective_masses(case))
    mass = m_arm * m_target / (m_arm + m_target)
    model = snare.build_model(scfg, mass)
    coefs, limits, ok = snare.node_table(model, nodes)
    if not ok:
        raise SolverFailure("optimize: the snare's static pressing solves did not converge at some node "
                            "(optimize.snare_config: rope/virtual_spring settings)")
    basis = case.basis

    def metrics(p, choice):
        closing = p[0] * (-basis[:, 0] @ _direction(basis, p[1:]))
        r = sd.virtual_impact(model, coefs[choice], closing)
        valid = r["separated"] & (r["max_indentation_m"] <= limits[choice])
        return r["peak_force_N"], r["impulse_N_s"], closing, valid

    facts = {"snare_config": str(path), "arm_effective_mass_kg": m_arm,
             "target_effective_mass_kg": m_target, "striking_mass_kg": mass,
             "k_v0_per_node_N_m": np.asarray(coefs[:, 0]).tolist()}
    return Problem(metrics, spec, choices=tuple(nodes)), facts


def optimize_snare_capture(case, cfg: dict, out: Path) -> dict:
    """Node and approach of the capture through the snare (see the module docstring); writes the outputs."""
    problem, facts = snare_problem(case, cfg)
    summary = optimize_approach(problem, cfg["optimize"], out, initial=np.append(np.asarray(case.params), 0.0))
    summary = {"contact": "snare", "optimum_node": summary.pop("optimum_choice"),
               "sweep_best_node": summary.pop("sweep_best_choice"), "nodes": summary.pop("choices"),
               "best_objective_per_node": summary.pop("best_objective_per_choice"), **summary, **facts}
    write_summary(out, summary)
    print_summary(summary, f"capture through the snare: node and approach ({problem.objective})")
    return summary
