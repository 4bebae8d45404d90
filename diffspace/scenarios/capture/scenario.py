"""The capture scenario (Cai et al. 2021, Aerospace 8:381): the rod of the reference arm hits a free-floating
target in one simulation (multibody arm + rigid target + compliant contact, :mod:`.model`).

Config::

    [robot]      path
    [arm]        attitude, joints ("held" | "free" | 1-based list of free joints), hold_method, base
                 ("free" | "planar"), plane_normal (base frame, planar only), tip_frame, tip_radius_m
    [target]     mass_kg, com_m, inertia_kg_m2 = [Ixx, Iyy, Izz, Ixy, Iyz, Izx], product_convention,
                 surface ("shaft" | "plane"), surface_point_m, surface_direction, shaft_radius_m, extent_m,
                 aim_point_m ("central" | [x, y, z]), orientation ("rod_axis" | "arm_com_line" | [x, y, z, w])
    [capture]    approach_speed_m_s, approach_angles_deg = [along t1, along t2], initial_gap_m, moving,
                 capture_speed_m_s
    [contact]    law, stiffness_source, stiffness_N_m_n, exponent, restitution_c, Hertz material data
    [simulation] t_final_s, rtol, atol, n_save, max_steps, max_segments

Target placement: the target is turned so that the surface normal at the aim point faces the arm
(``orientation``) and placed so that the tip sphere is ``initial_gap_m`` from the surface along that normal.
The approach direction (relative velocity of the arm w.r.t. the target) is
``d = normalise(-n0 + tan(a1) t1 + tan(a2) t2)`` in the target frame, ``t1`` = shaft axis (shaft) or a
tangent (plane), ``t2 = n0 x t1``. ``moving = "arm"``: the whole arm translates rigidly with ``v d``, the
target is at rest; ``"target"``: the target moves with ``-v d``.

Table 4 products of inertia: the paper lists ``Ixy, Iyz, Izx = 0.00353, 0.02253, -0.08852`` without a sign
convention. ``product_convention = "tensor"`` (default) reads them as the off-diagonal entries of the
inertia tensor (URDF/ADAMS style); ``"negated"`` reads them as the product integrals (CAD style). Both are
positive definite with the same principal moments; only the principal axes differ.

Design variables: ``capture.approach_speed_m_s``, ``capture.approach_angles_deg[0|1]``,
``contact.stiffness_N_m_n``, ``contact.restitution_c``, ``contact.exponent``.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from ...contact import LAWS, ChiLaw, ContactLaw
from ...io.config import Field
from ...core.robot import Robot
from ...core.spatial import quat_to_rotation
from ...core.status import Status, first_failure, flag
from ...integrate import SolverSettings
from ..base import AbstractScenario
from ..robot_config import ROBOT_FIELDS, simulation_fields
from . import placement as pl
from . import report
from .model import CaptureModel, reference_scales, simulate_capture
from .outcome import OUTCOMES, CaptureOutcome, capture_outcome
from .params import CaptureParams, approach_direction, inertia_tensor, physical_target
from .setup import capture_fields

SOLVER = SolverSettings(rtol=1e-10, atol=1e-12, n_save=1201, max_steps=20_000, max_segments=8)
"""Defaults of ``[simulation]``."""


def _config_fields() -> dict:
    pos = dict(gt=0.0)
    return {
        "robot": ROBOT_FIELDS,
        "arm": {
            "attitude": Field("any", "attitude_1", help="named attitude or joint angles [deg]"),
            "joints": Field("any", "held", check=pl.joints_check),
            "hold_method": Field("str", "merge", choices=("merge", "mask"),
                                 help="held joints: merged into rigid links (fast) or masked constraints"),
            "base": Field("str", "free", choices=("free", "planar")),
            "plane_normal": Field("floats", [0.0, 1.0, 0.0], length=3, check=pl.nonzero_check),
            "tip_frame": Field("str", "rod_tip"),
            "tip_radius_m": Field("float", 0.015, **pos),
        },
        "target": {
            "product_convention": Field("str", "tensor", choices=("tensor", "negated")),
            "surface": Field("str", "shaft", choices=("shaft", "plane")),
            "surface_point_m": Field("floats", [0.0, 0.0, 0.0], length=3),
            "surface_direction": Field("floats", [0.0, 0.0, -1.0], length=3, check=pl.nonzero_check),
            "shaft_radius_m": Field("float", 0.03, **pos),
            "extent_m": Field("float", 0.15, **pos, help="shaft length or plane patch radius"),
            "aim_point_m": Field("any", [0.03, 0.0, -0.1], check=pl.aim_check),
            "orientation": Field("any", "rod_axis", check=pl.orientation_check),
        },
        "capture": {
            "initial_gap_m": Field("float", 0.005, **pos),
            "moving": Field("str", "arm", choices=("arm", "target")),
            "capture_speed_m_s": Field("float", 0.01, min=0.0,
                                       help="separation speed up to which the capture mechanism holds the target "
                                            "(outcome captured, else rebounded)"),
        },
        "contact": {
            "law": Field("str", "zhiying_qishao", choices=LAWS),
            "stiffness_source": Field("str", "value", choices=("value", "hertz")),
            "youngs1_Pa": Field("float", 2.06e11, **pos),
            "poisson1": Field("float", 0.3, gt=-1.0, max=0.5),
            "youngs2_Pa": Field("float", 2.06e11, **pos),
            "poisson2": Field("float", 0.3, gt=-1.0, max=0.5),
        },
        "simulation": simulation_fields(SOLVER, t_final_s=0.3, segments=True),
    }


class Capture(AbstractScenario):
    """Arm + free-floating target + compliant contact in one hybrid simulation."""

    name: ClassVar[str] = "capture"
    headline: ClassVar[tuple[str, str]] = ("peak_force_N", "capture.approach_speed_m_s")
    outcomes: ClassVar[tuple[str, ...]] = OUTCOMES  # captured, rebounded, missed, not_reached
    params: CaptureParams
    model: CaptureModel  # its robot has the held joints merged (hold_method = "merge")
    robot: Robot  # the full robot (holding torques)
    angles: Float[Array, " n"]  # full joint angles at t = 0 [rad]
    q0: Float[Array, " nq"]
    target_x0: Float[Array, "3"]
    target_quat0: Float[Array, "4"]
    basis: Float[Array, "3 3"]  # columns n0, t1, t2 in the target frame
    t_final: Float[Array, ""]
    solver: SolverSettings
    gap: Float[Array, ""]
    capture_speed: Float[Array, ""]  # separation speed up to which the mechanism holds the target [m/s]
    moving_target: Float[Array, ""]  # 1: the target moves, 0: the arm moves
    held: tuple[int, ...] = eqx.field(static=True)  # 0-based joints held by their drives
    merged: bool = eqx.field(static=True)
    law_name: str = eqx.field(static=True)
    product_sign: float = eqx.field(static=True, default=1.0)  # -1: target.product_convention = "negated"

    @classmethod
    def config_fields(cls) -> dict:
        return _config_fields()

    @classmethod
    def from_config(cls, cfg: dict) -> "Capture":
        return cls(**capture_fields(cfg))

    # ------------------------------------------------------------------ physics
    def initial_state(self, params: CaptureParams):
        """``y0`` for the approach ``params`` and the nominal closing (normal) speed."""
        model = self.model
        rot = quat_to_rotation(self.target_quat0)
        v_rel = params.approach_speed * (rot @ approach_direction(self.basis, params.approach_angles))
        w = self.moving_target
        v_arm = model.base_motion.project(jnp.zeros(model.robot.nv).at[:3].set((1.0 - w) * v_rel))
        v_target = -w * v_rel
        v_target = v_target - model.planar * (v_target @ model.plane_normal) * model.plane_normal
        x0 = self.target_x0 + rot @ (params.target_com - model.target_com)  # the target frame stays where it was put
        y0 = (self.q0, v_arm, x0, self.target_quat0, v_target, jnp.zeros(3), jnp.zeros(2))
        closing = -(rot @ self.basis[:, 0]) @ (v_arm[:3] - v_target)
        return y0, closing

    def law(self, params: CaptureParams) -> ChiLaw:
        return ContactLaw(params.stiffness, params.exponent, params.restitution, law=self.law_name).canonical()

    def target_model(self, params: CaptureParams) -> CaptureModel:
        """The model with the target's mass properties and the contact law of ``params``."""
        inertia = inertia_tensor(params.target_inertia, self.product_sign)
        return eqx.tree_at(lambda m: (m.target_mass, m.target_com, m.target_inertia, m.law), self.model,
                           (params.target_mass, params.target_com, inertia, self.law(params)))

    def simulate(self, params: CaptureParams) -> CaptureOutcome:
        y0, closing = self.initial_state(params)
        closing = jax.lax.stop_gradient(jnp.maximum(closing, 1e-6))
        model = self.target_model(params)
        model = eqx.tree_at(lambda m: m.scales, model, reference_scales(model, y0, closing))
        dtmax = jax.lax.stop_gradient(0.25 * self.gap / closing)
        sol = simulate_capture(model, y0, self.t_final, self.solver, dtmax, adjoint=self.adjoint)
        outcome = capture_outcome(model, y0, sol, self.capture_speed)
        unphysical = flag(~physical_target(model.target_mass, model.target_inertia), Status.OUT_OF_RANGE)
        return eqx.tree_at(lambda o: o.status, outcome, first_failure(unphysical, outcome.status))

    def effective_masses(self, params: CaptureParams | None = None):
        """Arm and target effective masses along the contact normal at t = 0 (the line of the first touch)."""
        y0, _ = self.initial_state(self.params if params is None else params)
        return self.model.effective_masses(y0)

    # ------------------------------------------------------------------ design
    def metrics(self, params: CaptureParams) -> dict:
        out = self.simulate(params)
        return {"status": out.status, "outcome": out.outcome, "peak_force_N": out.peak_force, "impulse_N_s": out.impulse,
                "closing_speed_m_s": out.closing_speed, "separation_speed_m_s": out.separation_speed,
                "contact_duration_s": out.duration, "normal_restitution": out.separation_speed / out.closing_speed}

    # ------------------------------------------------------------------ reports
    def summary(self, outcome: CaptureOutcome) -> dict:
        summary = report.summary(self, outcome)
        m_arm, m_target = (float(m) for m in eqx.filter_jit(Capture.effective_masses)(self))
        summary.update(arm_effective_mass_kg=m_arm, target_effective_mass_kg=m_target,
                       equivalent_mass_kg=m_arm * m_target / (m_arm + m_target))
        return summary

    def write(self, outcome: CaptureOutcome, out: Path) -> None:
        report.write(self, outcome, out)

    def diagnose(self, outcome: CaptureOutcome) -> str:
        return report.diagnose(self, outcome)
