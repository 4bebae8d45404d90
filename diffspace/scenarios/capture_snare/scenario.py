r"""Capture through the snare (Cai et al. 2021, Aerospace 8:381, Sections 3.2 and 4.2): the capture
rod of the ``[capture]`` arm strikes one wire rope of the target's snare (a snare config, ``[snare_strike]``).

Model (the paper's reduction, Section 3.2 and Eq. (43)). The rope at node ``n`` acts as its virtual spring
``F = k_v(delta) delta + c_v delta_dot``: a polynomial fitted to the static pressing curve of that node
(:func:`diffspace.bodies.node_table`, one vmapped set of static solves for every interior node at
construction). It is struck by the equivalent mass of the capture

.. math:: m = \frac{m_{arm}\, m_{target}}{m_{arm} + m_{target}},

with both effective masses along the contact normal at the aim point of the ``[capture]`` case
(:meth:`~diffspace.scenarios.capture.Capture.effective_masses`: the arm with its held joints and base
restriction, the 41.7 kg target with its Table 4 inertia and lever arm). The 1-D impact sees the normal
closing speed ``v_n = v\,(d \cdot (-n_0))`` only, so the two approach angles act through ``v_n``. Touch and
release are Diffrax events (:func:`diffspace.contact.virtual_impact`), so ``jax.grad`` reaches the peak force,
impulse and closing speed. The node is data (an index into the precomputed table): one compiled program
serves every node, and ``diffspace optimize`` takes it through ``optimize.choices``.

Config: the capture scenario's sections (``[robot] [arm] [target] [capture] [contact] [simulation]``; the
compliant ``[contact]`` law is not used here) plus::

    [snare_strike]  config = "snare_capture.toml" (a snare config, relative to this config file),
                    node = 20 (1-based interior rope node)

with ``scenario = "capture_snare"`` at the top. Status: the impact's (``NO_EVENT`` when the rod never
separates), ``OUT_OF_RANGE`` when the indentation leaves the depth range the node's polynomial was fitted on.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float, Int

from ...bodies import SnareModel, node_table
from ...contact import ImpactOutcome, virtual_impact
from ...io.config import Field, read_toml
from ...core.status import ConfigError, SolverFailure, Status, describe, first_failure, flag
from .. import resolve_config
from ..base import AbstractOutcome, AbstractParams, AbstractScenario, Parameter
from ..capture import Capture
from ..capture.params import APPROACH_ANGLES, APPROACH_SPEED, approach_direction
from ..declare import declared
from ..declare import from_config as params_from_config
from ..snare import Snare
from . import report


class CaptureSnareParams(AbstractParams):
    approach_speed: Float[Array, ""] = declared(APPROACH_SPEED)
    approach_angles: Float[Array, "2"] = declared(APPROACH_ANGLES)  # rad
    node: Int[Array, ""] = declared("snare_strike.node", 20, integer=True, min=2, help="1-based rope node struck")


class CaptureSnareOutcome(AbstractOutcome):
    impact: ImpactOutcome
    closing_speed: Float[Array, ""]
    fit_limit: Float[Array, ""]  # depth range of the struck node's virtual-spring fit [m]
    node: Int[Array, ""]
    status: Int[Array, ""]


def _config_fields() -> dict:
    """The capture's config (the arm, the target, its contact law: it gives the effective masses) and the snare's."""
    snare = {"config": Field("path", required=True, help="snare config (relative to this config file)")}
    return Capture.schema().sections | {"snare_strike": snare}


def _snare_config(cfg: dict) -> tuple[dict, Path]:
    """The validated snare config named by ``snare_strike.config`` and its path."""
    path = Path(cfg["snare_strike"]["config"])
    try:
        cls, snare_cfg = resolve_config(read_toml(path), path.parent, str(path))
    except ConfigError as err:
        raise ConfigError(f"snare_strike.config ({path}): {err}") from None
    if cls is not Snare:
        raise ConfigError(f"snare_strike.config ({path}): expected a snare config ([snare]); got a {cls.name} config")
    return snare_cfg, path


class CaptureSnare(AbstractScenario):
    """The capture arm striking one rope of the target's snare (virtual spring per node, equivalent mass)."""

    name: ClassVar[str] = "capture_snare"
    headline: ClassVar[tuple[str, str]] = ("peak_force_N", "capture.approach_speed_m_s")
    params: CaptureSnareParams
    model: SnareModel  # the rope, clamps installed, struck by the capture's equivalent mass
    coefficients: Float[Array, "K p"]  # virtual-spring polynomial of nodes 2..n_sections
    fit_limits: Float[Array, " K"]
    normal: Float[Array, "3"]  # contact normal n0 (target frame)
    basis: Float[Array, "3 3"]  # columns n0, t1, t2 (target frame)
    arm_mass: Float[Array, ""]  # effective masses along the normal [kg]
    target_mass: Float[Array, ""]
    n_save: int = eqx.field(static=True)
    snare_config: str = eqx.field(static=True)

    @classmethod
    def config_fields(cls) -> dict:
        return _config_fields()

    @classmethod
    def from_config(cls, cfg: dict) -> "CaptureSnare":
        capture = Capture.from_config(cfg)
        snare_cfg, path = _snare_config(cfg)
        snare = Snare.from_config(snare_cfg)
        last = snare.rope.n_sections
        node = cfg["snare_strike"]["node"]
        if not 2 <= node <= last:
            raise ConfigError(f"snare_strike.node: expected an interior rope node in 2..{last}; got {node}")
        m_arm, m_target = (jnp.asarray(float(m)) for m in capture.effective_masses())
        model = snare.model_of(snare.params, m_arm * m_target / (m_arm + m_target))
        coefficients, limits, converged = node_table(model, np.arange(2, last + 1))
        if not converged:
            raise SolverFailure(f"snare_strike.config ({path}): the rope's static pressing solves did not converge "
                                "at some node (rope / virtual_spring settings)")
        return cls(params=params_from_config(CaptureSnareParams, cfg), model=model, coefficients=coefficients, fit_limits=limits,
                   normal=capture.basis[:, 0], basis=capture.basis, arm_mass=m_arm, target_mass=m_target,
                   n_save=cfg["simulation"]["n_save"], snare_config=str(path))

    # ------------------------------------------------------------------ physics
    def closing_speed(self, params: CaptureSnareParams):
        """Normal closing speed ``v (d . (-n0))`` [m/s]."""
        return params.approach_speed * (-self.normal @ approach_direction(self.basis, params.approach_angles))

    def simulate(self, params: CaptureSnareParams) -> CaptureSnareOutcome:
        row = params.node - 2
        closing = self.closing_speed(params)
        impact = virtual_impact(self.coefficients[row], self.model.virtual_damping, self.model.mass, closing,
                                n_save=self.n_save, adjoint=self.adjoint)
        limit = self.fit_limits[row]
        status = first_failure(impact.status, flag(impact.max_indentation > limit, Status.OUT_OF_RANGE))
        return CaptureSnareOutcome(impact, closing, limit, params.node, status)

    # ------------------------------------------------------------------ design
    def design_space(self) -> tuple[Parameter, ...]:
        last = int(self.coefficients.shape[0]) + 1  # the rope's last interior node
        node = Parameter("snare_strike.node", 2, last, "-", "node", integer=True, help="1-based rope node struck")
        return super().design_space() + (node,)

    def metrics(self, params: CaptureSnareParams) -> dict[str, Array]:
        out = self.simulate(params)
        return {"status": out.status, "peak_force_N": out.impact.peak_force, "impulse_N_s": out.impact.impulse,
                "closing_speed_m_s": out.closing_speed, "contact_duration_s": out.impact.contact_duration,
                "max_indentation_m": out.impact.max_indentation}

    # ------------------------------------------------------------------ reports
    def summary(self, outcome: CaptureSnareOutcome) -> dict:
        return report.summary(self, outcome)

    def write(self, outcome: CaptureSnareOutcome, out: Path) -> None:
        report.write(outcome, Path(out))

    def diagnose(self, outcome: CaptureSnareOutcome) -> str:
        status = int(outcome.status)
        if status == Status.OUT_OF_RANGE:
            return (f"node {int(outcome.node)}: indentation {float(outcome.impact.max_indentation):.4g} m beyond the "
                    f"virtual spring's fitted range {float(outcome.fit_limit):.4g} m (raise virtual_spring.max_depth_m "
                    "in the snare config, or approach slower)")
        return f"virtual-spring impact at node {int(outcome.node)}: {describe(status)}"
