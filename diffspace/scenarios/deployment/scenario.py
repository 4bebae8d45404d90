r"""Deployment of a replaceable-interface rover mast (seed: Liu, Wen & Zhang 2024, Machines 12:243).

A driven revolute joint at the rover body turns the first of ``scheme + 1`` steel cube modules by
``drive.angle_deg`` in ``drive.duration_s``; ``scheme`` flexible interfaces (ANCF thin-shell cylinders, or
their Timoshenko-beam equivalent) join the modules. Model: :mod:`.model` (constraints, mass, forces),
:mod:`.simulation` (generalized-alpha integration, energy balance), reports: :mod:`.report`. Paper values
(Tables 1-2): interface length 105 mm, inner diameter 84 mm, thickness 2 mm, E = 2.4 GPa, nu = 0.35,
rho = 1100 kg/m^3; modules: edge 200 mm, steel (rho = 7850 kg/m^3, solid, 62.8 kg each). No gravity
(paper assumption 3). The interface damping (not in the paper, whose undamped model cannot settle) is
Kelvin-Voigt, ``zeta = beta omega / 2`` per mode: ``interface.damping_s = 2.5e-3`` gives 1.6 % at the first
mode of scheme 3 (2.07 Hz) and 9 % at that of scheme 1 (11.7 Hz).

Design variables (config keys): ``interface.thickness_m``, ``interface.inner_diameter_m``,
``interface.length_m``, ``interface.young_Pa``, ``interface.damping_s``, ``mast.module_density_kg_m3`` and,
with ``drive.law = "spline"``, ``drive.spline_points_deg[k]`` (interior control points of the clamped cubic
B-spline, :class:`diffspace.actuation.drive.BSpline`).
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from ...actuation.drive import BSpline, Cubic, Cycloidal, Drive, Quintic, Trapezoid
from ...io.config import Field
from ...core.status import ConfigError, Status, first_failure, flag
from ..base import AbstractParams, AbstractScenario, Parameter
from ..declare import from_config as params_from_config
from . import report
from .model import Mast, MastParams, build_mast
from .simulation import Outcome, Settings, simulate_mast

LAWS = ("trapezoid", "cubic", "quintic", "cycloidal", "spline")
MODELS = ("shell", "beam")
SPLINE_KEY = "drive.spline_points_deg"
SPLINE_BOUNDS = (-45.0, 135.0)  # deg, for a 90 deg move
DEFAULT_SPLINE_POINTS = 6


def _config_fields() -> dict:
    pos = dict(gt=0.0)
    return {
        "mast": {
            "scheme": Field("int", 3, min=1, max=3, help="1 | 2 | 3 interfaces between 2 | 3 | 4 modules"),
        },
        "interface": {
            "model": Field("str", "shell", choices=MODELS),
        },
        "mesh": {
            "n_circumferential": Field("int", 8, min=4, max=64),
            "n_axial": Field("int", 2, min=1, max=32),
            "gauss_points": Field("int", 3, min=2, max=6),
        },
        "drive": {
            "law": Field("str", "trapezoid", choices=LAWS),
            "angle_deg": Field("float", 90.0, gt=0.0, max=180.0),
            "duration_s": Field("float", 6.1, **pos),
            "ramp_s": Field("float", 0.1, **pos, help="trapezoid: acceleration and deceleration time"),
            "spline_points_deg": Field("floats", [], help="spline: interior control points (default: 6 points "
                                                          "fitted to the cycloidal law)"),
        },
        "simulation": {
            "step_s": Field("float", 2.5e-3, **pos, max=0.05, help="fixed generalized-alpha step"),
            "settle_s": Field("float", 4.0, min=0.0, help="simulated time after the motion"),
            "frame_steps": Field("int", 10, min=1, max=1000, help="steps between stored states"),
            "newton_iterations": Field("int", 4, min=1, max=20),
            "rho_inf": Field("float", 0.5, min=0.0, max=1.0, help="generalized-alpha spectral radius at high "
                                                                   "frequency (damps the unresolved shell modes)"),
        },
    }


def build_drive(d: dict) -> Drive:
    """The drive law of a validated ``[drive]`` table (angles in rad, from 0)."""
    angle, duration = np.deg2rad(d["angle_deg"]), d["duration_s"]
    if d["law"] == "trapezoid":
        return Trapezoid(0.0, angle, duration, d["ramp_s"])
    if d["law"] == "spline":
        points = d["spline_points_deg"]
        if not points:
            return BSpline.fit(Cycloidal(0.0, angle, duration), DEFAULT_SPLINE_POINTS)
        return BSpline(0.0, angle, duration, np.deg2rad(points))
    return {"cubic": Cubic, "quintic": Quintic, "cycloidal": Cycloidal}[d["law"]](0.0, angle, duration)


def _check(cfg: dict) -> None:
    d, i = cfg["drive"], cfg["interface"]
    problems = []
    if d["law"] == "trapezoid" and not d["ramp_s"] < 0.5 * d["duration_s"]:
        problems.append(f"drive.ramp_s: must be < half of drive.duration_s = {d['duration_s']:g} s")
    if cfg["simulation"]["step_s"] > d["duration_s"] / 20:
        problems.append("simulation.step_s: must resolve the motion (<= drive.duration_s / 20)")
    if i["thickness_m"] >= 0.5 * i["inner_diameter_m"]:
        problems.append("interface.thickness_m: a thin shell needs thickness << inner_diameter_m / 2")
    if problems:
        raise ConfigError("\n".join(problems))


class DeploymentParams(AbstractParams):
    mast: MastParams
    drive: Drive


class Deployment(AbstractScenario):
    """Deployment of a rover mast: a driven joint unfolds steel modules joined by flexible shell interfaces."""

    name: ClassVar[str] = "deployment"
    headline: ClassVar[tuple[str, str]] = ("residual_vibration_rms_deg_s2", "interface.thickness_m")
    params: DeploymentParams
    settings: Settings
    n_modules: int = eqx.field(static=True)
    interface_model: str = eqx.field(static=True)  # "shell" | "beam"
    law: str = eqx.field(static=True)
    mesh: tuple[int, int, int] = eqx.field(static=True)  # circumferential, axial, Gauss points

    @classmethod
    def config_fields(cls) -> dict:
        return _config_fields()

    @classmethod
    def from_config(cls, cfg: dict) -> "Deployment":
        _check(cfg)
        m, i, d, s, mesh = cfg["mast"], cfg["interface"], cfg["drive"], cfg["simulation"], cfg["mesh"]
        settings = Settings.for_horizon(d["duration_s"] + s["settle_s"], s["step_s"], s["frame_steps"],
                                        iterations=s["newton_iterations"], rho_inf=s["rho_inf"])
        return cls(params=params_from_config(DeploymentParams, cfg, drive=build_drive(d)), settings=settings,
                   n_modules=m["scheme"] + 1, interface_model=i["model"], law=d["law"],
                   mesh=(mesh["n_circumferential"], mesh["n_axial"], mesh["gauss_points"]))

    # ------------------------------------------------------------------ physics
    def mast(self, params: DeploymentParams) -> Mast:
        n_circ, n_axial, n_gauss = self.mesh
        return build_mast(params.mast, params.drive, self.n_modules, self.interface_model, n_circ, n_axial, n_gauss)

    def simulate(self, params: DeploymentParams) -> Outcome:
        outcome = simulate_mast(self.mast(params), self.settings)
        settled = jnp.isfinite(report.vibration_metrics(outcome)["settling_time_s"])
        return eqx.tree_at(lambda o: o.status, outcome,
                           first_failure(outcome.status, flag(~settled, Status.NOT_SETTLED)))

    # ------------------------------------------------------------------ design
    def design_space(self) -> tuple[Parameter, ...]:
        if self.law != "spline":
            return super().design_space()
        points = tuple(Parameter(f"{SPLINE_KEY}[{k}]", *SPLINE_BOUNDS, "deg", "drive.points", index=k,
                                 help=f"spline control point {k}") for k in range(self.params.drive.points.shape[0]))
        return points + super().design_space()

    def metrics(self, params: DeploymentParams) -> dict:
        outcome = self.simulate(params)
        return {"status": outcome.status, **report.vibration_metrics(outcome)}

    # ------------------------------------------------------------------ reports
    def summary(self, outcome: Outcome) -> dict:
        return report.summary(self, outcome)

    def write(self, outcome: Outcome, out: Path) -> None:
        report.write(self, outcome, out)

    def diagnose(self, outcome: Outcome) -> str:
        return report.diagnose(self, outcome)


__all__ = ["LAWS", "MODELS", "Deployment", "DeploymentParams", "build_drive"]
