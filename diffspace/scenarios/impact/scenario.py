"""Two-body impact along a line (seed: Cai et al. 2021, Aerospace 8:381, Sections 2 and 4.1).

Body 1 (``mass1_kg``) approaches body 2 (``mass2_kg``, at rest) with ``approach_speed_m_s`` across an
``initial_gap_m``; the contact force is a :class:`~diffspace.contact.ContactLaw` (paper Eq. (1), n = 1.5,
damping law by name, Zhiying-Qishao Eq. (2) by default); without friction this is the paper's
equivalent-mass impact (Eqs. (4)-(5)). Physics: :func:`diffspace.contact.simulate_impact`.

Air-table friction (paper Section 4.1.2 and Eq. (10)). The six free-deceleration tests in
``airtable_friction_decel.csv`` give a = 0.088, 0.089, 0.095, 0.092, 0.090, 0.089 m/s^2, mean
``a = 0.0905 m/s^2`` (sample std 0.0026). Coulomb's law ``m a = mu m g`` gives ``mu = a / g``; the paper
quotes ``mu = 0.00905``, i.e. it used ``g = 10 m/s^2`` (its f1 = 3.3792 N, mu_1 = 0.0088 and
f = mu (m1 + m2) g = 5.4526 N all follow from g = 10). The data fix only the product ``mu g = a``.
``friction.model``: ``coulomb`` = air-table friction ``mu m_i g`` on each
body with stick-slip (physical); ``paper`` = Eq. (10), a constant ``f = mu (m1 + m2) g`` on the relative
motion during contact (the paper's model; the shipped config uses it to reproduce the paper); ``none`` (the default).
:func:`friction_from_decelerations` reproduces the paper's numbers.

Design variables: ``impact.approach_speed_m_s``, ``impact.initial_gap_m``, ``impact.mass1_kg``,
``impact.mass2_kg``, ``contact.stiffness_N_m_n``, ``contact.exponent``, ``contact.restitution_c``,
``friction.mu``. Measured data for ``fit``: CSV ``v_in_mm_s, v_out_measured_mm_s, F_peak_measured_N``
(impact speed at first touch, detached velocity, peak force), relative residuals.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ...contact import FRICTION_MODELS, LAWS, ContactLaw, ImpactFriction, ImpactOutcome, hertz_stiffness, simulate_impact
from ...contact.impact import IMPACT_SOLVER, OUTCOMES
from ...integrate import SolverSettings
from ...io.config import Field
from ...io.tables import read_csv_columns
from ...core.status import ConfigError, Status
from ..base import AbstractParams, AbstractScenario, FitData
from ..declare import declared
from ..declare import from_config as params_from_config
from ..robot_config import simulation_fields, solver_settings
from . import report

DATA_COLUMNS = ["v_in_mm_s", "v_out_measured_mm_s", "F_peak_measured_N"]


def friction_from_decelerations(decelerations, gravity=10.0, mass_total=38.4 + 21.85) -> dict:
    """Paper Section 4.1.2: ``mu = mean(a) / g`` and ``f = mu m_total g`` from free-deceleration tests."""
    a = float(np.mean(decelerations))
    return {"mean_deceleration_m_s2": a, "mu": a / gravity, "friction_force_N": a * mass_total}


class ImpactParams(AbstractParams):
    approach_speed: Float[Array, ""] = declared("impact.approach_speed_m_s", 0.09483, gt=0.0, design=(1e-4, 10.0),
                                                log=True, help="speed of body 1 at t = 0")
    initial_gap: Float[Array, ""] = declared("impact.initial_gap_m", 0.0, min=0.0, design=(0.0, 1.0),
                                             help="separation at t = 0 (0: start at first touch)")
    mass1: Float[Array, ""] = declared("impact.mass1_kg", 38.4, gt=0.0, design=(1e-3, 1e5), log=True,
                                       help="moving body (paper: passive simulator)")
    mass2: Float[Array, ""] = declared("impact.mass2_kg", 21.85, gt=0.0, design=(1e-3, 1e5), log=True,
                                       help="body at rest (paper: active simulator)")
    stiffness: Float[Array, ""] = declared("contact.stiffness_N_m_n", 1.0e7, gt=0.0, design=(1e3, 1e13), log=True,
                                           help="k in F = k d^n + ... [N/m^n]")
    exponent: Float[Array, ""] = declared("contact.exponent", 1.5, gt=0.0, max=5.0, design=(0.5, 3.0), help="n")
    restitution: Float[Array, ""] = declared("contact.restitution_c", 0.55, gt=0.0, max=1.0, design=(1e-3, 1.0),
                                             help="input restitution c of the law, (0, 1]")
    mu: Float[Array, ""] = declared("friction.mu", 0.0, min=0.0, design=(1e-6, 1.0), log=True)
    gravity: Float[Array, ""] = declared("friction.gravity_m_s2", 9.80665, gt=0.0)


def _config_fields() -> dict:
    pos = dict(gt=0.0)
    return {
        "impact": {
            "t_max_s": Field("float", 2.0, **pos, help="horizon for reaching contact and separating"),
        },
        "contact": {
            "law": Field("str", "zhiying_qishao", choices=LAWS),
            "stiffness_source": Field("str", "value", choices=("value", "hertz")),
            "geometry": Field("str", "sphere_plane", choices=("sphere_plane", "sphere_sphere")),
            "radius1_m": Field("float", 0.018, **pos),
            "radius2_m": Field("float", 0.018, **pos, help="sphere_sphere only"),
            "youngs1_Pa": Field("float", 2.06e11, **pos),
            "poisson1": Field("float", 0.3, gt=-1.0, max=0.5),
            "youngs2_Pa": Field("float", 2.06e11, **pos),
            "poisson2": Field("float", 0.3, gt=-1.0, max=0.5),
        },
        "friction": {
            "model": Field("str", "none", choices=FRICTION_MODELS),
        },
        "simulation": simulation_fields(IMPACT_SOLVER, segments=True),
    }


def _stiffness(c: dict) -> float:
    if c["stiffness_source"] == "value":
        return c["stiffness_N_m_n"]
    r2 = c["radius2_m"] if c["geometry"] == "sphere_sphere" else float("inf")
    return float(hertz_stiffness(c["youngs1_Pa"], c["poisson1"], c["radius1_m"], c["youngs2_Pa"], c["poisson2"], r2))


class Impact(AbstractScenario):
    """Two-body impact with a compliant contact law and optional air-table friction."""

    name: ClassVar[str] = "impact"
    headline: ClassVar[tuple[str, str]] = ("peak_force_N", "impact.approach_speed_m_s")
    outcomes: ClassVar[tuple[str, ...]] = OUTCOMES  # separated, stuck_together, not_reached
    params: ImpactParams
    t_max: Float[Array, ""]
    solver: SolverSettings  # tolerances on the scaled state
    law: str = eqx.field(static=True)
    friction_model: str = eqx.field(static=True)

    @classmethod
    def config_fields(cls) -> dict:
        return _config_fields()

    @classmethod
    def from_config(cls, cfg: dict) -> "Impact":
        imp, con, fr, sim = cfg["impact"], cfg["contact"], cfg["friction"], cfg["simulation"]
        if fr["model"] != "none" and fr["mu"] == 0.0:
            raise ConfigError(f"friction.mu: must be > 0 with friction.model = '{fr['model']}'")
        params = params_from_config(ImpactParams, cfg, stiffness=jnp.asarray(_stiffness(con), dtype=float))
        return cls(params=params, t_max=jnp.asarray(imp["t_max_s"], dtype=float), solver=solver_settings(sim),
                   law=con["law"],
                   friction_model=fr["model"])

    # ------------------------------------------------------------------ physics
    def equivalent_mass(self, params: ImpactParams):
        return params.mass1 * params.mass2 / (params.mass1 + params.mass2)

    def contact_law(self, params: ImpactParams) -> ContactLaw:
        return ContactLaw(params.stiffness, params.exponent, params.restitution, mass=self.equivalent_mass(params),
                          law=self.law)

    def friction(self, params: ImpactParams) -> ImpactFriction:
        paper_force = params.mu * (params.mass1 + params.mass2) * params.gravity
        return ImpactFriction(paper_force, params.mu, params.gravity, self.friction_model)

    def simulate(self, params: ImpactParams) -> ImpactOutcome:
        law = self.contact_law(params)
        law = law.canonical() if self.law != "kelvin_voigt" else law
        return simulate_impact(law, params.mass1, params.mass2, params.approach_speed, params.initial_gap,
                               self.t_max, self.friction(params), settings=self.solver, adjoint=self.adjoint)

    # ------------------------------------------------------------------ design
    def metrics(self, params: ImpactParams) -> dict:
        out = self.simulate(params)
        return {"status": out.status, "outcome": out.outcome, "detached_velocity_m_s": out.detached_velocity,
                "peak_force_N": out.peak_force, "contact_duration_s": out.contact_duration, "impulse_N_s": out.impulse,
                "restitution": out.restitution, "max_indentation_m": out.max_indentation,
                "impact_speed_m_s": out.impact_speed, "common_velocity_m_s": out.common_velocity}

    def read_data(self, path: Path) -> FitData:
        cols = read_csv_columns(path, DATA_COLUMNS)
        problems = [f"{path}: row {i + 1}, column {c}: must be > 0, got {x:g}"
                    for c in DATA_COLUMNS for i, x in enumerate(cols[c]) if not x > 0]
        if problems:
            raise ConfigError("\n".join(problems))
        v_in, v_out, force = 1e-3 * cols["v_in_mm_s"], 1e-3 * cols["v_out_measured_mm_s"], cols["F_peak_measured_N"]
        conditions = {"impact.approach_speed_m_s": v_in, "impact.initial_gap_m": np.zeros_like(v_in)}
        measured = {"detached_velocity_m_s": v_out, "peak_force_N": force}
        return FitData(conditions, measured, dict(measured), absolute_sigma=False)  # relative residuals

    # ------------------------------------------------------------------ reports
    def summary(self, outcome: ImpactOutcome) -> dict:
        return report.summary(self, outcome)

    def write(self, outcome: ImpactOutcome, out: Path) -> None:
        report.write(self, outcome, out)

    def diagnose(self, outcome: ImpactOutcome) -> str:
        if int(outcome.status) == Status.NO_EVENT:
            t_max = float(self.t_max)
            return (f"phase 'contact': the bodies were still in contact, neither separated nor bound together, at "
                    f"impact.t_max_s = {t_max:g} s (raise it)")
        if int(outcome.status) == Status.EVENT_BUDGET and bool(outcome.contact_made):
            return (f"phase 'contact': more than simulation.max_segments = {self.solver.max_segments} contact and stick-slip "
                    "events before the bodies separated or stuck together (raise the budget)")
        return Status(int(outcome.status)).description
