"""Free-floating manipulator with a flexible link (the quaternion rigid-flexible space manipulator paper).

The paper's base and two-link arm, driven by ``A sin(2 pi t / T)`` on both joints, simulated in maximal
coordinates (quaternion bodies, revolute constraints, Baumgarte, optional momentum rows, optional
assumed-mode last link: :mod:`.model`) and compared with the rigid arm in minimal coordinates.
``diffspace run configs/flexible_arm.toml``.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from ...integrate import SolverSettings, Stabilization
from ...io.config import Field
from ...core.spatial import safe_norm
from ...core.status import Status, describe, failed, first_failure, flag
from ..base import AbstractParams, AbstractScenario
from ..declare import declared
from ..declare import from_config as params_from_config
from ..robot_config import simulation_fields, solver_settings
from . import model, results
from .model import Settings
from .outcome import FlexibleArmOutcome, key_results


SOLVER = SolverSettings(rtol=1e-9, atol=1e-11, n_save=501, max_steps=200_000)
"""Defaults of ``[simulation]``."""


class FlexibleArmParams(AbstractParams):
    """What design work may change (config units)."""

    frequency_hz: Float[Array, ""] = declared("arm.frequency_hz", 5.0, gt=0.0, design=(1.0, 50.0), log=True,
                                              help="first clamped-free bending frequency",
                                              label="first bending frequency of link 2")
    damping_ratio: Float[Array, ""] = declared("arm.damping_ratio", 0.03, min=0.0, max=1.0, design=(0.001, 0.5),
                                               log=True, label="modal damping ratio")
    amplitude_N_m: Float[Array, ""] = declared("torque.amplitude_N_m", 0.5, design=(0.05, 2.0),
                                               help="tau = A sin(2 pi t / T) on both joints",
                                               label="joint torque amplitude")
    period_s: Float[Array, ""] = declared("torque.period_s", 1.0, gt=0.0, design=(0.5, 5.0),
                                          label="joint torque period")
    alpha: Float[Array, ""] = declared("stabilization.alpha", 10.0, min=0.0, help="Baumgarte gain (1/s), paper Eq. 9")
    beta: Float[Array, ""] = declared("stabilization.beta", 10.0, min=0.0, help="Baumgarte gain (1/s), paper Eq. 9")


class FlexibleArm(AbstractScenario):
    """The paper's numerical study (section "Numerical Study"), configurable."""

    name: ClassVar[str] = "flexible_arm"
    # the smooth (RMS) end-effector difference: its gradient w.r.t. the modal frequency is the design headline
    headline: ClassVar[tuple[str, str]] = ("end_effector_difference_rms_m", "arm.frequency_hz")
    params: FlexibleArmParams
    robot: model.Robot
    settings: Settings

    @classmethod
    def config_fields(cls) -> dict:
        positive = dict(gt=0.0)
        return {
                "base": {
                    "mass_kg": Field("float", 4.0, **positive),
                    "inertia_kg_m2": Field("float", 0.4, **positive, help="about each axis through the centre"),
                    "side_m": Field("float", 1.0, **positive, help="joint 1 sits side/2 from the base centre"),
                },
                "links": {
                    "mass_kg": Field("float", 1.0, **positive),
                    "inertia_kg_m2": Field("float", 0.1, **positive, help="about each axis through the CoM"),
                    "length_m": Field("float", 1.0, **positive),
                },
                "arm": {
                    "flexible": Field("bool", True, help="assumed-mode last link"),
                    "modes": Field("int", 2, min=1, max=8, help="modal coordinates: mode 1 in y, in z, mode 2 ..."),
                },
                "simulation": simulation_fields(SOLVER, t_final_s=5.0),
                "stabilization": {
                    "momentum_constraints": Field("bool", True, help="paper Eqs. 7-8 as constraint rows"),
                    "projection": Field("bool", False, help="project onto the constraints after every step"),
                },
            }

    @classmethod
    def from_config(cls, cfg: dict) -> "FlexibleArm":
        base, links, arm, sim, stab = (cfg[k] for k in ("base", "links", "arm", "simulation", "stabilization"))
        robot = model.arm_robot(
            base["mass_kg"], base["inertia_kg_m2"], base["side_m"],
            links["mass_kg"], links["inertia_kg_m2"], links["length_m"],
        )
        settings = Settings(
            t_final=jnp.asarray(sim["t_final_s"], dtype=float), solver=solver_settings(sim), flexible=arm["flexible"],
            modes=arm["modes"],
            momentum=stab["momentum_constraints"], projection=stab["projection"],
        )
        return cls(params_from_config(FlexibleArmParams, cfg), robot, settings)

    # ------------------------------------------------------------------ pure
    def simulate(self, params: FlexibleArmParams) -> FlexibleArmOutcome:
        return self.run(params, reactions=True)

    def run(self, params: FlexibleArmParams, reactions: bool = False) -> FlexibleArmOutcome:
        """Both formulations; ``reactions`` also evaluates the joint multipliers (one more compiled copy)."""
        s = self.settings
        system = model.maximal_system(
            self.robot, s, params.frequency_hz, params.damping_ratio, params.amplitude_N_m, params.period_s
        )
        stabilization = Stabilization(params.alpha, params.beta, project=s.projection)
        sol = model.solve_maximal(system, self.robot, s, stabilization, reactions, adjoint=self.adjoint)
        ref = model.solve_minimal(self.robot, s, params.amplitude_N_m, params.period_s, adjoint=self.adjoint)
        maximal = model.maximal_motion(system, self.robot, sol)
        modal = sol.q[:, system.bodies.nq :]
        reaction = None
        if reactions:  # point rows of each revolute joint: force of the parent on the child
            reaction = jnp.stack([lam[..., :3] for lam in system.joint_multipliers(sol.multipliers)], axis=1)
        return FlexibleArmOutcome(
            ts=sol.ts,
            maximal=maximal,
            reference=model.minimal_motion(self.robot, ref),
            modal=modal,
            modal_rate=sol.w[:, system.bodies.nv :],
            tip_deflection=safe_norm(maximal.deflection),
            constraint_violation=sol.position_violation,
            velocity_violation=sol.velocity_violation,
            momentum=jax.vmap(system.system_momentum)(sol.q, sol.w),
            mass_centre=jax.vmap(system.mass_centre)(sol.q),
            energy=jax.vmap(system.energy)(sol.q, sol.w),
            input_power=jax.vmap(lambda t, q, w: model.input_power(system, t, q, w))(sol.ts, sol.q, sol.w),
            reaction_force=reaction,
            maximal_steps=sol.num_steps,
            reference_steps=ref.num_steps,
            maximal_status=sol.status,
            reference_status=ref.status,
            status=first_failure(sol.status, ref.status),
        )

    def metrics(self, params: FlexibleArmParams) -> dict[str, Array]:
        out = self.run(params)
        values = key_results(out)
        finite = jnp.all(jnp.stack([jnp.isfinite(v) for v in values.values()]))
        values["status"] = first_failure(out.status, flag(~finite, Status.NON_FINITE))
        return values

    # ------------------------------------------------------------------ host side
    def summary(self, outcome: FlexibleArmOutcome) -> dict:
        return results.summary(self.settings, self.params.frequency_hz, outcome)

    def write(self, outcome: FlexibleArmOutcome, out: Path) -> None:
        results.write(outcome, out)

    def diagnose(self, outcome: FlexibleArmOutcome) -> str:
        if failed(outcome.maximal_status):
            return f"maximal-coordinate run (constrained solve): {describe(int(outcome.maximal_status))}"
        if failed(outcome.reference_status):
            return f"minimal-coordinate rigid reference: {describe(int(outcome.reference_status))}"
        return describe(int(outcome.status))
