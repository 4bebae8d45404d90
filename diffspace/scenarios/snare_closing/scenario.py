"""The snare-closing scenario on the scenario protocol: three wire ropes close on a free grapple shaft while
the rotating ring turns (capture step 2 of Cai et al. 2021, Section 3, Fig. 1). Physics:
:mod:`diffspace.scenarios.snare_closing.model`.

Design variables (config keys, config units): ``drive.duration_s``, ``drive.final_angle_deg``,
``drive.start_time_s`` (``drive.kind = "rest_to_rest"``), ``shaft.mass_kg``, ``shaft.initial_position_m[i]``,
``shaft.initial_velocity_m_s[i]``, ``rope.bending_rigidity_N_m2``, ``rope.axial_rigidity_N``,
``contact.stiffness_N_m_n``, ``contact.restitution_c``, ``contact.reference_speed_m_s``.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ...actuation.drive import Drive, RestToRest
from ...bodies import RopeSpec, Shaft, SnareRings
from ...contact import ContactLaw
from ...integrate import SolverSettings
from ...core.status import ConfigError
from ..base import AbstractParams, AbstractScenario, Parameter
from ..declare import declared
from ..declare import from_config as params_from_config
from ..robot_config import solver_settings
from ..snare.config import rope_spec
from ..snare.params import AXIAL_RIGIDITY, CONTACT_RESTITUTION, CONTACT_STIFFNESS
from . import report
from .analysis import axis_distance
from .config import build_drive, check_config, config_fields, max_ring_angle, steps_per_save
from .model import ClosingModel, initial_state, rope_nodes
from .outcome import OUTCOMES, ClosingOutcome, closing_metrics, simulate_closing
from .semi_implicit import BENDING_LIMIT, bending_step

def _drive_parameters(max_angle_deg: float) -> tuple[Parameter, ...]:
    """The rest-to-rest drive's design variables (the final angle bounded by the snare's largest ring angle)."""
    return (Parameter("drive.duration_s", 1e-3, 100.0, "s", "drive.duration"),
            Parameter("drive.start_time_s", 0.0, 100.0, "s", "drive.start_time"),
            Parameter("drive.final_angle_deg", 0.0, max_angle_deg, "deg", "drive.end"))


class ClosingParams(AbstractParams):
    """The drive, the shaft, the ropes and their contact law (the rope's ``EA`` and the law shared with the
    one-rope snare: :mod:`diffspace.scenarios.snare.params`)."""

    drive: Drive  # ring angle psi(t) [rad]; its design variables depend on its kind (_drive_parameters)
    shaft_mass: Float[Array, ""] = declared("shaft.mass_kg", 41.7, gt=0.0, design=(1e-2, 1e5), log=True,
                                            help="free-floating target (paper Table 4)")
    bending_rigidity: Float[Array, ""] = declared("rope.bending_rigidity_N_m2", 0.020915, gt=0.0, design=(1e-4, 10.0),
                                                  log=True, help="EI; k_tor = EI / section length")
    axial_rigidity: Float[Array, ""] = declared(AXIAL_RIGIDITY)
    contact_stiffness: Float[Array, ""] = declared(CONTACT_STIFFNESS)
    contact_restitution: Float[Array, ""] = declared(CONTACT_RESTITUTION)
    reference_speed: Float[Array, ""] = declared("contact.reference_speed_m_s", 0.1, gt=0.0, design=(1e-3, 10.0),
                                                 log=True, help="v_0 of lambda = chi k / v_0")
    shaft_position: Float[Array, "2"] = declared("shaft.initial_position_m", [0.03, 0.04], design=(-1.0, 1.0),
                                                 help="in the ring plane")  # at t = 0
    shaft_velocity: Float[Array, "2"] = declared("shaft.initial_velocity_m_s", [0.0, -0.02], design=(-1.0, 1.0))


class SnareClosing(AbstractScenario):
    """Three (``closing.n_ropes``) ropes closing on a free grapple shaft as the rotating ring turns."""

    name: ClassVar[str] = "snare_closing"
    headline: ClassVar[tuple[str, str]] = ("peak_contact_force_N", "drive.duration_s")  # rest-to-rest drives
    outcomes: ClassVar[tuple[str, ...]] = OUTCOMES  # enclosed, escaped
    params: ClosingParams
    rope: RopeSpec  # pinned ends; the rest bend is turned outward by model()
    rings: SnareRings  # rope 0, ends at ring angle psi (unit rate)
    shaft: Shaft
    contact_exponent: Float[Array, ""]
    end_time: Float[Array, ""]
    solver: SolverSettings  # n_save; tolerances and step budget of scheme "tsit5"
    psi_max_deg: float = eqx.field(static=True)
    scheme: str = eqx.field(static=True)  # "semi_implicit" (fixed step) or "tsit5" (adaptive)
    stable_bending_rigidity: float = eqx.field(static=True)  # semi_implicit: largest EI [N m^2]
    steps_per_save: int = eqx.field(static=True)  # semi_implicit: equal steps between two saved times
    law: str = eqx.field(static=True)
    n_ropes: int = eqx.field(static=True)
    points_per_section: int = eqx.field(static=True)

    @classmethod
    def config_fields(cls) -> dict:
        return config_fields()

    @classmethod
    def from_config(cls, cfg: dict) -> "SnareClosing":
        check_config(cfg)
        c, s, r, k, sim = cfg["closing"], cfg["shaft"], cfg["rope"], cfg["contact"], cfg["simulation"]
        a = lambda x: jnp.asarray(x, dtype=float)  # noqa: E731
        params = params_from_config(ClosingParams, cfg, drive=build_drive(cfg["drive"]))
        scenario = cls(params=params, rope=rope_spec(r, "pinned"),
                       rings=SnareRings(c["ring_radius_m"], c["open_end_distance_m"], 1.0), shaft=Shaft(s["radius_m"]),
                       contact_exponent=a(k["exponent"]), end_time=a(c["end_time_s"]), solver=solver_settings(sim),
                       psi_max_deg=float(np.rad2deg(max_ring_angle(cfg))), scheme=sim["scheme"],
                       steps_per_save=steps_per_save(c["end_time_s"], sim["n_save"], sim["step_s"]),
                       stable_bending_rigidity=np.inf, law=k["law"], n_ropes=c["n_ropes"],
                       points_per_section=k["points_per_section"])
        scenario.check_step()
        scenario.check_clearance()
        return scenario.with_stable_bending_rigidity()

    # ------------------------------------------------------------------ model
    @property
    def step_length(self) -> Float[Array, ""]:
        """The semi-implicit scheme's step ``h`` [s]."""
        return self.end_time / ((self.solver.n_save - 1) * self.steps_per_save)

    def check_step(self) -> None:
        """``ConfigError`` if the configured rope is too stiff in bending for the semi-implicit step (host side)."""
        if self.scheme != "semi_implicit":
            return
        limit = float(bending_step(self.model_of(self.params).rope))
        if float(self.step_length) > limit:
            raise ConfigError(f"simulation.step_s: a step of {float(self.step_length):.3g} s cannot follow this rope's "
                              f"bending zigzag mode (its explicit bending springs and dashpots); use at most "
                              f"{limit:.3g} s")

    def with_stable_bending_rigidity(self) -> "SnareClosing":
        """This scenario with :attr:`stable_bending_rigidity` set (host side): with the semi-implicit scheme, the
        largest ``EI`` whose explicit bending forces the step keeps stable (:func:`~diffspace.bodies.rope_stepping.
        bending_step`: ``h c_b + (h omega_b)^2 / 4 <= BENDING_LIMIT``; at a fixed damping ratio ``c_b`` grows as
        ``sqrt(EI)`` and ``omega_b^2`` as ``EI``, so with ``q^2 = EI / EI_0``: ``q P_c + q^2 P_k = BENDING_LIMIT``).
        ``EA`` is free: the axial springs are implicit."""
        if self.scheme != "semi_implicit":
            return self
        rope = self.model_of(self.params).rope
        mass, l0 = float(rope.masses[1]), float(rope.rest_lengths[0])
        h, factor = float(self.step_length), 16.0 / (l0**2 * mass)
        p_c, p_k = h * factor * float(rope.bending_damping), 0.25 * h**2 * factor * float(rope.bending_stiffness)
        q = 2.0 * BENDING_LIMIT / (p_c + np.sqrt(p_c**2 + 4.0 * p_k * BENDING_LIMIT))
        return dataclasses.replace(self, stable_bending_rigidity=float(self.params.bending_rigidity * q**2))

    def model_of(self, params: ClosingParams) -> ClosingModel:
        """The closing model of ``params`` (pure): ``k_tor = EI / l_0``, the rest bend turned outward."""
        k_tor = params.bending_rigidity * self.rope.n_sections / self.rope.length
        rope = self.rope.build(params.axial_rigidity, k_tor)
        rope = eqx.tree_at(lambda r: r.rest_bend, rope, -rope.rest_bend)
        law = ContactLaw(params.contact_stiffness, self.contact_exponent, params.contact_restitution,
                         mass=params.shaft_mass, law=self.law).canonical()
        return ClosingModel(rope, self.rings, params.drive, self.shaft, law, params.shaft_mass, params.reference_speed,
                            self.rope.length, self.n_ropes, self.points_per_section)

    def check_clearance(self) -> None:
        """``ConfigError`` if the shaft overlaps a rope's initial static shape (host side, one compiled solve)."""
        nodes, shaft, ok = eqx.filter_jit(_initial_nodes)(self)
        if not bool(ok):
            return  # simulate reports the failed static solve with its status
        clearance = min(float(axis_distance(xk - shaft)) for xk in nodes)
        clearance -= float(0.5 * self.rope.diameter + self.shaft.radius)
        if clearance <= 0.0:
            raise ConfigError(f"shaft.initial_position_m: the shaft overlaps a rope at t = 0 (clearance {clearance:.3g} m)")

    # ------------------------------------------------------------------ protocol
    def simulate(self, params: ClosingParams) -> ClosingOutcome:
        return simulate_closing(self, params)

    def metrics(self, params: ClosingParams) -> dict:
        return closing_metrics(self, params)

    def design_space(self) -> tuple[Parameter, ...]:
        space = tuple(self._stable_bound(p) for p in super().design_space())
        if isinstance(self.params.drive, RestToRest):
            return space + _drive_parameters(self.psi_max_deg)
        return space

    def _stable_bound(self, parameter: Parameter) -> Parameter:
        """``EI`` bounded by :attr:`stable_bending_rigidity` (semi-implicit scheme)."""
        upper = self.stable_bending_rigidity
        if parameter.field != "bending_rigidity" or not parameter.lower < upper < parameter.upper:
            return parameter
        return dataclasses.replace(parameter, upper=upper)

    def summary(self, outcome: ClosingOutcome) -> dict:
        return report.summary(self, outcome)

    def write(self, outcome: ClosingOutcome, out: Path) -> None:
        report.write(self, outcome, out)

    def diagnose(self, outcome: ClosingOutcome) -> str:
        return report.diagnose(self, outcome)


def _initial_nodes(scenario: SnareClosing):
    """Every rope's nodes (R, N+1, 3) and the shaft position at ``t = 0``, and whether the static solve converged."""
    model = scenario.model_of(scenario.params)
    y0, ok = initial_state(model, scenario.params.shaft_position, scenario.params.shaft_velocity)
    nodes, _ = rope_nodes(model, 0.0, y0.x_free, y0.v_free)
    return nodes, y0.p, ok
