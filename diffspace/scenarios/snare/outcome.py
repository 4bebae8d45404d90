"""What one snare simulation computes (pure JAX): the installed shape, the virtual spring at the struck node
(and its surface over end distances, Eq. (41)), the virtual-spring impact (Eq. (43)) and the full dynamic rope
impact; and the leaner set of headline metrics for design work.

Status: ``NOT_CONVERGED`` when the static shape or pressing solves fail, ``NO_EVENT`` when an impact has not
separated within its horizon, ``SOLVER_FAILURE`` when the dynamic solve stops; the first of these wins.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float, Int

from ...bodies import (
    NodeStatics,
    RopeImpact,
    SnareModel,
    VirtualSpring,
    dynamic_horizon,
    dynamic_impact,
    fit_virtual_spring,
    shape_and_pressing_curve,
    snare_virtual_impact,
    stiffness_profile,
)
from ...contact import ImpactOutcome, eval_surface, fit_surface
from ...core.status import Status, failed, first_failure, flag


class SurfaceFit(eqx.Module):
    """Eq. (41) over end distances: static ``forces (D, K)``, the 0/1 ``weights`` of the fitted range,
    ``coefficients`` ``c_ij``, the weighted ``rms_error`` [N] and ``converged``."""

    forces: Float[Array, "D K"]
    weights: Float[Array, "D K"]
    coefficients: Float[Array, "p q"]
    rms_error: Float[Array, ""]
    converged: Bool[Array, ""]


class SnareOutcome(eqx.Module):
    """One snare impact. ``model``: the rope model of the run (clamps installed); ``shape``: installed nodes
    (N+1, 3) and whether their solve converged; ``spring``: the struck node's virtual spring; ``profile``: ``k_v(0)`` at nodes 2..N [N/m];
    ``virtual``/``dynamic``: the two impacts; ``horizon``: of the dynamic impact [s]."""

    model: SnareModel
    shape: Float[Array, "N1 3"]
    shape_converged: Bool[Array, ""]
    spring: VirtualSpring
    profile: Float[Array, " Nm1"]
    surface: SurfaceFit
    virtual: ImpactOutcome
    dynamic: RopeImpact
    horizon: Float[Array, ""]
    status: Int[Array, ""]


def _statics_status(shape_ok, spring: VirtualSpring):
    return flag(~(shape_ok & spring.converged), Status.NOT_CONVERGED)


def static_sweep(model: SnareModel, node, end_distances: Float[Array, " D"]) -> NodeStatics:
    """Installed shape and pressing curve of ``node`` (0-based) at each end distance (leading axis ``D``), the
    clamps installed at the model's own end distance, as one batch of continuations
    (:func:`~diffspace.bodies.snare.shape_and_pressing_curve`)."""
    def one(d):
        return shape_and_pressing_curve(eqx.tree_at(lambda t: t.rings.end_distance, model, d), node,
                                        installed_at=model.rings.end_distance)

    return jax.vmap(one)(end_distances)


def _installed(model: SnareModel, statics: NodeStatics) -> SnareModel:
    return eqx.tree_at(lambda m: m.rings.attach_angles, model, statics.attach_angles)


def surface_fit(model: SnareModel, sweep: NodeStatics, end_distances, degree_d: int) -> SurfaceFit:
    """Eq. (41): the pressing curves of ``sweep`` at ``end_distances`` fitted over ``F_c in [0, F_A]`` with
    ``d_ref`` = the model's end distance."""
    forces = sweep.forces
    weights = jnp.cumprod(forces <= model.fit_max_force, axis=1).astype(float)
    d_ref = model.rings.end_distance
    coef = fit_surface(model.fit_depths, end_distances, forces, model.degree, degree_d, d_ref, weights)
    pred = jax.vmap(lambda d: jax.vmap(lambda x: eval_surface(coef, x, d, d_ref))(model.fit_depths))(end_distances)
    rms = jnp.sqrt(jnp.sum(weights * (pred - forces) ** 2) / jnp.sum(weights))
    return SurfaceFit(forces, weights, coef, rms, jnp.all(sweep.shape_converged & sweep.forces_converged))


def simulate_snare(scenario, params) -> SnareOutcome:
    """Everything ``diffspace run`` reports (see the module docstring). The installed shape and the struck
    node's pressing curve are the first member of the end-distance sweep of the surface fit (one batch)."""
    model = scenario.model_of(params, installed=False)
    node, speed = params.node - 1, params.approach_speed
    distances = jnp.concatenate([model.rings.end_distance[None], scenario.end_distances])
    sweep = static_sweep(model, node, distances)
    own, others = jax.tree.map(lambda a: a[0], sweep), jax.tree.map(lambda a: a[1:], sweep)
    model, x_eq, shape_ok = _installed(model, own), own.shape, own.shape_converged
    spring = fit_virtual_spring(model, own.forces, own.forces_converged)
    virtual = snare_virtual_impact(model, spring.coefficients, speed, n_save=200, adjoint=scenario.adjoint)
    horizon = dynamic_horizon(model, spring.coefficients, virtual, speed, params.initial_gap, scenario.horizon_factor)
    dynamic = dynamic_impact(model, x_eq, node, speed, horizon, scenario.solver, gap=params.initial_gap,
                             **scenario.scheme_options)
    degree_d = min(2, scenario.end_distances.shape[0] - 1)
    surface = surface_fit(model, others, scenario.end_distances, degree_d)
    status = first_failure(_statics_status(shape_ok, spring), virtual.status, dynamic.status)
    return SnareOutcome(model, x_eq, shape_ok, spring, stiffness_profile(model, x_eq), surface, virtual, dynamic, horizon,
                        status)


def _nan_if_failed(status, metrics: dict) -> dict:
    bad = failed(status)
    return {k: jnp.where(bad, jnp.nan, v) for k, v in metrics.items()}


def snare_metrics(scenario, params) -> dict:
    """Design metrics (SI): the configured method's ``peak_force_N``, ``impulse_N_s``, ``restitution``,
    ``max_indentation_m`` and ``fit_range_fraction`` (maximum indentation over the virtual spring's fitted
    depth range; > 1: the polynomial is extrapolated), the virtual spring's own ``virtual_*`` numbers and
    ``k_v0_N_m``, the ``dynamic_*`` ones with ``simulation.method = "dynamic"``, ``approach_speed_m_s``."""
    model = scenario.model_of(params, installed=False)
    node, speed = params.node - 1, params.approach_speed
    statics = shape_and_pressing_curve(model, node, installed_at=model.rings.end_distance)
    model, x_eq, shape_ok = _installed(model, statics), statics.shape, statics.shape_converged
    spring = fit_virtual_spring(model, statics.forces, statics.forces_converged)
    virtual = snare_virtual_impact(model, spring.coefficients, speed, adjoint=scenario.adjoint)
    statics = _statics_status(shape_ok, spring)
    out = {"approach_speed_m_s": speed, "k_v0_N_m": spring.coefficients[0],
           "virtual_peak_force_N": virtual.peak_force, "virtual_impulse_N_s": virtual.impulse,
           "virtual_contact_duration_s": virtual.contact_duration, "virtual_restitution": virtual.restitution,
           "virtual_max_indentation_m": virtual.max_indentation}
    if scenario.method == "virtual":
        status = first_failure(statics, virtual.status)
        chosen = {"peak_force_N": virtual.peak_force, "impulse_N_s": virtual.impulse,
                  "restitution": virtual.restitution, "max_indentation_m": virtual.max_indentation}
    else:
        horizon = dynamic_horizon(model, spring.coefficients, virtual, speed, params.initial_gap,
                                  scenario.horizon_factor)
        dyn = dynamic_impact(model, x_eq, node, speed, horizon, scenario.solver, gap=params.initial_gap,
                             **scenario.scheme_options)
        status = first_failure(statics, dyn.status)
        chosen = {"peak_force_N": dyn.peak_force, "impulse_N_s": dyn.impulse, "restitution": dyn.restitution,
                  "max_indentation_m": dyn.max_node_displacement}
        out.update({"dynamic_peak_force_N": dyn.peak_force, "dynamic_impulse_N_s": dyn.impulse,
                    "dynamic_rebound_speed_m_s": dyn.rebound_speed,
                    "dynamic_max_node_displacement_m": dyn.max_node_displacement})
    chosen["fit_range_fraction"] = chosen["max_indentation_m"] / spring.fit_limit
    return {"status": status, **_nan_if_failed(status, {**chosen, **out})}
