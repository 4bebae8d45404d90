r"""Unilateral contact with friction: the planar floating-base arm pressing on and sliding along a plane.

Hu, Wang, Li & Qian, "Modeling and simulation of space robot with unilateral contact based on
complementary problem" (2016). The model (:mod:`.model`), the inputs (:mod:`.control`), the contact LCPs
(:mod:`diffspace.contact.unilateral`, solved by :func:`diffspace.contact.lemke`) and the fixed-step
integration (:mod:`.stepping`) are pure JAX, so a run is differentiable end to end: gradients pass
through every LCP by the implicit derivative of its final basis.

``diffspace run configs/unilateral_contact.toml``; design variables: ``contact.mu`` and the controller's
``stiffness_N_m``, ``damping_N_s_m``, ``press_force_N``, ``slide_m``; metrics: ``tip_travel_m`` (net tip motion along
the plane), ``min_normal_force_N`` (smallest normal force after the pressing ramp: 0 means the tip
separated), ``separated_s``, ``peak_normal_force_N``, ``max_penetration_m``, ``max_closing_speed_m_s``
(approach speed stopped by a contact impulse: the landing speed).

Status: the LCP failures and non-finite states fail the run; two warnings keep it but say what to watch:
``singular_pose`` (the controller's damped inverse was active: the arm came near a stretched or folded
pose, where tip force and posture are no longer decoupled) and ``penetration`` (the tip went deeper into
the plane than ``contact.penetration_tolerance_m``). A commanded slide beyond the arm's reach on the plane
is refused when the config is read.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float, Int

from ...actuation import RestToRest
from ...contact.unilateral import SEPARATED
from ...core.status import ConfigError, Status, describe, first_failure, flag
from ..base import AbstractOutcome, AbstractParams, AbstractScenario, Parameter
from ..declare import declared
from ..declare import from_config as params_from_config
from . import config as cfg_mod
from . import report
from .control import InputProfiles, TaskController
from .model import PlanarArm
from .stepping import StepOptions, ContactTrajectory, run

SLIDE = Parameter("controller.slide_m", 0.0, 0.45, "m", "controller.slide.end",
                  help="commanded slide along +x (within the tip's reach on the plane)")  # a leaf of the drive law


class UnilateralParams(AbstractParams):
    q0: Float[Array, "6"]  # [x0, y0, theta0, theta1..3] (m, rad)
    u0: Float[Array, "6"]
    mu: Float[Array, ""] = declared("contact.mu", 0.1, min=0.0, design=(0.01, 0.5),
                                    label="Coulomb friction coefficient")
    controller: TaskController
    profiles: InputProfiles


class UnilateralOutcome(AbstractOutcome):
    status: Int[Array, ""]
    trajectory: ContactTrajectory
    mu: Float[Array, ""]  # the friction coefficient of the run (plots show the cone)
    singular_manipulability: Float[Array, ""]  # w_0 of the run's controller [m^2] (the summary's singular time)


class Unilateral(AbstractScenario):
    """The paper's planar space robot in unilateral frictional contact with the plane ``y = 0``."""

    name: ClassVar[str] = "unilateral"
    headline: ClassVar[tuple[str, str]] = ("tip_travel_m", "controller.stiffness_N_m")
    arm: PlanarArm
    options: StepOptions
    params: UnilateralParams

    @classmethod
    def config_fields(cls) -> dict:
        return cfg_mod.config_fields()

    @classmethod
    def from_config(cls, cfg: dict) -> "Unilateral":
        sim, robot, contact = cfg["unilateral"], cfg["robot"], cfg["contact"]
        times, values = cfg_mod.profile_table(cfg["inputs"])
        arm = PlanarArm.build(robot["masses_kg"], robot["lengths_m"], robot["base_inertia_kg_m2"])
        q0 = np.concatenate([sim["initial_base_m"], [np.deg2rad(sim["initial_base_angle_deg"])],
                             np.deg2rad(sim["initial_joint_angles_deg"])])
        u0 = np.concatenate([sim["initial_base_velocity_m_s"], [np.deg2rad(sim["initial_base_rate_deg_s"])],
                             np.deg2rad(sim["initial_joint_rates_deg_s"])])
        if float(arm.tip_position(jnp.asarray(q0))[1]) < -1e-9:
            raise ConfigError("unilateral.initial_joint_angles_deg: the tip starts below the plane y = 0")
        if cfg["controller"]["enabled"]:
            points = np.asarray(arm.body_points(jnp.asarray(q0)))  # base, joints 1-3, tip
            cfg_mod.check_reach(points[1], points[-1, 0], cfg["controller"]["slide_m"], robot["lengths_m"][1:])
        if sim["formulation"] == "velocity" and contact["restitution"] != 0.0:
            raise ConfigError("contact.restitution: applies to the acceleration level; the velocity level's "
                              "impacts are plastic (set 0 or unilateral.formulation = \"acceleration\")")
        options = StepOptions(
            formulation=sim["formulation"], dt=sim["dt_s"], n_steps=cfg_mod.step_count(sim),
            baumgarte_rate=contact["baumgarte_rate_1_s"], closed_gap=contact["closed_gap_m"],
            restitution=contact["restitution"], penetration_tolerance=contact["penetration_tolerance_m"],
        )
        c = cfg["controller"]
        slide = RestToRest(0.0, c["slide_m"], c["slide_duration_s"], c["slide_start_s"])
        params = params_from_config(UnilateralParams, cfg, q0=jnp.asarray(q0), u0=jnp.asarray(u0),
                                    controller={"slide": slide},
                                    profiles=InputProfiles(jnp.asarray(times), jnp.asarray(values)))
        if not c["enabled"]:
            params = eqx.tree_at(lambda p: p.controller, params, params.controller.switched_off())
        return cls(arm=arm, options=options, params=params)

    # ------------------------------------------------------------------ pure
    def simulate(self, params: UnilateralParams) -> UnilateralOutcome:
        traj = run(self.arm, params.q0, params.u0, params.mu, params.controller, params.profiles, self.options)
        finite = jnp.all(jnp.isfinite(traj.q)) & jnp.all(jnp.isfinite(traj.u))
        solved = jnp.all(traj.lcp_converged) & jnp.all(traj.impact_converged)
        singular = jnp.any(traj.manipulability < params.controller.singular_manipulability)
        penetrated = -jnp.min(traj.tip[:, 1]) > self.options.penetration_tolerance
        status = first_failure(flag(~solved, Status.NOT_CONVERGED), flag(~finite, Status.NON_FINITE),
                               flag(singular, Status.SINGULAR_POSE), flag(penetrated, Status.PENETRATION))
        return UnilateralOutcome(status=status, trajectory=traj, mu=params.mu,
                                 singular_manipulability=params.controller.singular_manipulability)

    def metrics(self, params: UnilateralParams) -> dict[str, Array]:
        out = self.simulate(params)
        traj = out.trajectory
        pressed = traj.t[:-1] >= params.controller.press_ramp
        min_force = jnp.min(jnp.where(pressed, traj.normal_force, jnp.inf))
        return {
            "tip_travel_m": traj.tip[-1, 0] - traj.tip[0, 0],
            "min_normal_force_N": jnp.where(jnp.any(pressed), min_force, jnp.nan),
            "separated_s": self.options.dt * jnp.sum(pressed & (traj.mode == SEPARATED)),
            "peak_normal_force_N": jnp.max(traj.normal_force),
            "max_penetration_m": jnp.maximum(-jnp.min(traj.tip[:, 1]), 0.0),
            "max_closing_speed_m_s": jnp.max(traj.closing_speed),
            "status": out.status,
        }

    # ------------------------------------------------------------------ host side
    def design_space(self) -> tuple[Parameter, ...]:
        return super().design_space() + (SLIDE,)

    def summary(self, outcome: UnilateralOutcome) -> dict:
        return report.summary(self.arm, self.options, outcome.trajectory, int(outcome.status),
                              float(outcome.singular_manipulability))

    def write(self, outcome: UnilateralOutcome, out: Path) -> None:
        report.write(self.arm, outcome.trajectory, outcome.mu, Path(out))

    def diagnose(self, outcome: UnilateralOutcome) -> str:
        traj = outcome.trajectory
        failed = np.flatnonzero(~np.asarray(traj.lcp_converged))
        if failed.size:
            k = int(failed[0])
            return (f"contact LCP ({self.options.formulation} level) not solved at step {k} "
                    f"(t = {k * self.options.dt:.3f} s) after {int(traj.lcp_pivots[k])} pivots")
        failed = np.flatnonzero(~np.asarray(traj.impact_converged))
        if failed.size:
            k = int(failed[0])
            return f"impact LCP not solved at step {k} (t = {k * self.options.dt:.3f} s)"
        return describe(int(outcome.status))
