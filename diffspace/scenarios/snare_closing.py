r"""Snare closing: three wire ropes close on a free grapple shaft while the rotating ring turns (capture step 2
of the seed, Cai et al. 2021, Aerospace 8:381, Section 3, Fig. 1: "the rotating ring begins to rotate, making
the capture zone shrink ... several impacts will occur between the target load and the flexible wire ropes").

Geometry (paper Section 3.1.2). Fixed and rotating rings of radius ``R`` share the plane ``z = 0`` and the ring
axis ``z``. Rope 0 runs from the fixed-ring point ``A`` at angle ``-pi/2 - gamma_0`` to the rotating-ring point
``B`` at ``-pi/2 + gamma_0 + psi(t)``, so ``d_se = 2 R sin(gamma_0 + psi / 2)``: the open snare has the paper's
minimum ``d_se(0) = 2 R sin(gamma_0)`` and ``d_se`` reaches ``2 R`` (each rope spans a diameter) at
``psi_max = pi - 2 gamma_0``. (These are :meth:`Snare.ends` with unit rate evaluated at "time" ``psi``.) Ropes
``k = 1 .. n - 1`` are rope 0 turned by ``2 pi k / n`` about ``z``; the ring angle ``psi(t)`` is a
:mod:`diffspace.drive` profile. Ropes do not touch each other (they lie in slightly different planes in the
device; their crossing at the centre is not modelled).

Ropes: the lumped-mass model of :mod:`diffspace.contact.rope` (node masses Eq. (17), Newton's law Eq. (24),
axial springs Eq. (26), bending springs Eqs. (37)-(39)), one parameter set for all ropes, vmapped over ropes;
the end nodes are prescribed and their masses count as ring inertia. **Bow.** The ropes' rest curvature
(``rope.rest_bend_total_deg``) points *outward*, so they line the ring in the open snare (a preformed rope): with
the inward bow of the one-rope scenario the ropes' middles sit 8.7 mm from the axis at ``d_se = 0.26 m`` and no
10 mm shaft fits; an outward bow against an inward rest curvature would roll over out of plane (a maximum of
the bending energy about the chord). Initial shapes: static equilibrium (Eqs. (35)-(36)) at ``psi(0)``.

Grapple shaft: a rigid cylinder along ``z`` of mass ``m_s``, translating in the ring plane (no rotation, no
gravity). Every rope touches it through :meth:`Shaft.forces` (frictionless
:class:`~diffspace.contact.ContactLaw`; the Hunt-Crossley damping ``lambda = chi k / v_0`` uses a fixed
reference speed ``v_0``, since impacts at many speeds happen during one closing) at its nodes and at
equally spaced points along its sections (:func:`contact_forces`): with node contact alone a shaft sliding
along the ropes sinks between nodes and is held in spurious pockets.

Equations (state: free nodes, shaft, impulse and two work integrals)::

    m_i x_i''  = f_int,i + f_c,i                        (Eq. (24), every free node of every rope)
    m_s p''    = -sum_{k,i} f_c,k,i                      (shaft)
    J'         = -sum f_c                                (contact impulse on the shaft)
    W_drive'   = -sum_k (f_int + f_c)_{k,B} . v_B,k = tau psi'    (drive power)
    W_c'       = -sum_{k,i} f_c,k,i . (v_k,i - p') = sum F delta_dot   (power absorbed by the contacts)
    D_rope'    = -sum_{k,i} f_damp,k,i . v_k,i  (all nodes)   (power dissipated by the rope dashpots)

with the ring torque ``tau = -sum_k e_z . (r_B,k x (f_int + f_c)_{k,B})`` (the ring holds its end nodes against
the rope; ring inertia not included). Energy balance (exact for the ODE, so its
residual measures the solver error): ``E(t) - E(0) = W_drive - W_c - D_rope`` with ``E`` the kinetic energy of
the free nodes plus the ropes' elastic energy plus the shaft's kinetic energy; ``W_c`` minus the contact
potential ``sum k delta^(n+1) / (n+1)`` is the energy the contact damping has dissipated. One Tsit5 + PID
solve (Diffrax).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ..io.config import Field, Schema, validate
from ..status import ConfigError
from ..contact.forces import safe_power
from ..bodies.rope import Rope, Shaft, assemble, equilibrium
from ..actuation.drive import Drive, RestToRest, Tabulated
from ..io.results import print_summary, write_summary, write_timeseries
from ..status import SolverFailure
from ..spatial import safe_norm
from . import snare
from .snare_design import Snare, arc_guess


class SnareClosing(eqx.Module):
    """The closing snare. ``rope``: one rope's parameters (all ropes alike, outward rest bend); ``snare``: rope
    0's ring geometry (``Snare(R, d_se(0), ring_rate=1)``, ends at ring angle ``psi``); ``drive``: ``psi(t)``
    [rad]; ``shaft``/``law``: grapple shaft (axis ``z``) and its contact law; ``shaft_mass`` [kg];
    ``reference_speed`` ``v_0`` [m/s] of the contact damping. Static: rope ``length`` [m], ``n_ropes``,
    contact ``points_per_section`` (:func:`contact_forces`)."""

    rope: Rope
    snare: Snare
    drive: Drive
    shaft: Shaft
    law: eqx.Module
    shaft_mass: Float[Array, ""]
    reference_speed: Float[Array, ""]
    length: float = eqx.field(static=True)
    n_ropes: int = eqx.field(static=True, default=3)
    points_per_section: int = eqx.field(static=True, default=1)

    def turns(self) -> Float[Array, "R 3 3"]:
        """Rotations about the ring axis by ``2 pi k / n`` that carry rope 0 onto rope ``k``."""
        phi = 2.0 * jnp.pi * jnp.arange(self.n_ropes) / self.n_ropes
        c, s, o, i = jnp.cos(phi), jnp.sin(phi), jnp.zeros_like(phi), jnp.ones_like(phi)
        return jnp.stack([jnp.stack([c, -s, o], -1), jnp.stack([s, c, o], -1), jnp.stack([o, o, i], -1)], -2)

    def ends(self, t) -> tuple[Float[Array, "R 3"], Float[Array, "R 3"], Float[Array, "R 3"], Float[Array, "R 3"]]:
        """Fixed-ring ends, rotating-ring ends and their velocities at time ``t``: ``(A, B, dA/dt, dB/dt)``."""
        psi, rate = self.drive.state(t)
        a, b, _, db_dpsi = self.snare.end_states(psi)
        rot = self.turns()
        return rot @ a, rot @ b, jnp.zeros((self.n_ropes, 3)), (rot @ db_dpsi) * rate


State = tuple  # (x_free (R,N-1,3), v_free (R,N-1,3), p, w, impulse (3,), drive work, contact work, rope dissipation)


def rope_nodes(model: SnareClosing, t, x_free, v_free):
    """All node positions and velocities ``(R, N+1, 3)`` of every rope at time ``t``."""
    first, last, v_first, v_last = model.ends(t)
    return jax.vmap(assemble)(x_free, first, last), jax.vmap(assemble)(v_free, v_first, v_last)


def contact_points(n_sections: int, per_section: int) -> Float[Array, "P N1"]:
    """Linear interpolation ``W`` from the ``N + 1`` nodes to the contact points: ``per_section`` equally spaced
    points on every section (its first node included) and the last node, ``P = per_section N + 1`` (rows sum
    to 1)."""
    s = np.arange(per_section) / per_section
    weights = np.zeros((n_sections * per_section + 1, n_sections + 1))
    for i in range(n_sections):
        weights[i * per_section:(i + 1) * per_section, i] = 1.0 - s
        weights[i * per_section:(i + 1) * per_section, i + 1] = s
    weights[-1, -1] = 1.0
    return jnp.asarray(weights)


def contact_forces(model: SnareClosing, x, v, p, w) -> tuple[Float[Array, "R N1 3"], Float[Array, "R P"]]:
    """Shaft contact forces on the nodes of every rope and the force magnitudes at the contact points.

    :meth:`Shaft.forces` acts at the contact points ``x_p = W x`` (velocities ``W v``), all ropes in one call;
    the nodes receive ``W^T f_p`` (the virtual-work transpose), so impulse and power are unchanged. With one
    point per section these are the paper's node forces (Section 3.2: "the impact force only acts on the
    node"); more points keep a shaft from sinking between nodes (up to ``r - sqrt(r^2 - l_0^2 / 4)`` deep,
    2.8 mm for 15 mm sections and ``r = 11.5 mm``), which traps a sliding shaft in spurious pockets."""
    weights = contact_points(model.rope.n_sections, model.points_per_section)
    xp, vp = weights @ x, weights @ v
    f, mag = model.shaft.forces(model.law, model.rope, xp.reshape(-1, 3), vp.reshape(-1, 3), p, w,
                                model.reference_speed)
    return weights.T @ f.reshape(xp.shape), mag.reshape(xp.shape[:-1])


def ring_torque(last: Float[Array, "R 3"], end_forces: Float[Array, "R 3"]) -> Float[Array, ""]:
    """Drive torque about the ring axis [N m] that holds the rotating-ring ends against the forces
    ``end_forces`` the ropes and the shaft put on them: ``-sum_k e_z . (r_B,k x f_B,k)``."""
    return -jnp.sum(last[:, 0] * end_forces[:, 1] - last[:, 1] * end_forces[:, 0])


def internal_forces(model: SnareClosing, x, v) -> tuple[Float[Array, "R N1 3"], Float[Array, "R N1 3"]]:
    """Elastic (``-dV/dx``) and damping forces on every node of every rope (:meth:`Rope.internal_forces`, split
    to expose the damping power)."""
    return -jax.vmap(jax.grad(model.rope.elastic_energy))(x), jax.vmap(model.rope.damping_forces)(x, v)


def closing_field(t, y: State, model: SnareClosing) -> State:
    """Vector field of the module docstring's equations."""
    x_free, v_free, p, w = y[:4]
    x, v = rope_nodes(model, t, x_free, v_free)
    f_c, _ = contact_forces(model, x, v, p, w)
    f_el, f_damp = internal_forces(model, x, v)
    f = f_el + f_damp + f_c
    f_shaft = -jnp.sum(f_c, axis=(0, 1))
    return (v_free, f[:, 1:-1] / model.rope.masses[1:-1, None], w, f_shaft / model.shaft_mass, f_shaft,
            -jnp.sum(f[:, -1] * v[:, -1]), -jnp.sum(f_c * (v - w)), -jnp.sum(f_damp * v))


def initial_state(model: SnareClosing, shaft_position, shaft_velocity) -> tuple[State, Array]:
    """Ropes at rest in static equilibrium at ``psi(0)`` (rope 0 solved from an outward arc, the others turned
    copies) and the shaft at ``shaft_position``/``shaft_velocity`` (in-plane, 2 or 3 components). Returns
    ``(y0, converged)``."""
    first, last, _, _ = model.ends(0.0)
    a, b = first[0], last[0]
    guess = arc_guess(a, b, model.length, model.rope.n_sections, bow=a + b)
    xi, ok = equilibrium(model.rope, guess[1:-1], a, b)
    x_free = jnp.einsum("kij,nj->kni", model.turns(), xi)
    in_plane = lambda u: jnp.zeros(3).at[:2].set(jnp.asarray(u, float)[:2])  # noqa: E731
    zero = jnp.zeros(())
    return (x_free, jnp.zeros_like(x_free), in_plane(shaft_position), in_plane(shaft_velocity), jnp.zeros(3),
            zero, zero, zero), ok


def closing_solve(model: SnareClosing, y0: State, t_end, *, rtol=1e-6, atol=1e-9, n_save: int = 1000,
                  max_steps: int = 1_000_000, adjoint: str = "reverse"):
    """One Tsit5 + PID solve over ``[0, t_end]`` saving ``n_save`` states (``throw=False``: check
    ``sol.result``). The axial modes set the step (``omega ~ 2 sqrt(k_tes / m_i)``, ~N^2)."""
    return diffrax.diffeqsolve(
        diffrax.ODETerm(closing_field), diffrax.Tsit5(), t0=0.0, t1=t_end, dt0=None, y0=y0, args=model,
        saveat=diffrax.SaveAt(ts=jnp.linspace(0.0, t_end, n_save)),
        stepsize_controller=diffrax.PIDController(rtol=rtol, atol=atol), max_steps=max_steps, throw=False,
        adjoint=diffrax.ForwardMode() if adjoint == "forward" else diffrax.RecursiveCheckpointAdjoint(),
    )


def contact_potential(model: SnareClosing, x, p) -> Float[Array, ""]:
    """Elastic energy stored in the contacts, ``sum k delta^(n+1) / (n+1)`` [J]."""
    xp = contact_points(model.rope.n_sections, model.points_per_section) @ x
    delta, _ = model.shaft.indentation(model.rope, xp.reshape(-1, 3), p)
    n = model.law.exponent
    return jnp.sum(model.law.stiffness * safe_power(delta, n + 1.0) / (n + 1.0))


def sample(model: SnareClosing, t, y: State) -> dict:
    """Derived quantities at one saved state: ring angle/rate, per-rope contact force vectors and magnitudes,
    ring torque, shaft force, energies (module docstring) and the work integrals."""
    x_free, v_free, p, w, impulse, work_drive, work_contact, dissipated = y
    x, v = rope_nodes(model, t, x_free, v_free)
    f_c, mags = contact_forces(model, x, v, p, w)
    f = sum(internal_forces(model, x, v)) + f_c
    psi, rate = model.drive.state(t)
    per_rope = jnp.sum(f_c, axis=1)
    kinetic = jnp.sum(jax.vmap(model.rope.kinetic_energy)(v.at[:, 0].set(0.0).at[:, -1].set(0.0)))
    elastic = jnp.sum(jax.vmap(model.rope.elastic_energy)(x))
    return {"psi": psi, "psi_rate": rate, "rope_force": per_rope, "rope_force_norm": safe_norm(per_rope),
            "contact_point_force": mags, "ring_torque": ring_torque(x[:, -1], f[:, -1]),
            "shaft_force": -jnp.sum(per_rope, axis=0), "rope_kinetic": kinetic, "rope_elastic": elastic,
            "shaft_kinetic": 0.5 * model.shaft_mass * (w @ w), "contact_potential": contact_potential(model, x, p),
            "impulse": impulse, "work_drive": work_drive, "work_contact": work_contact, "rope_dissipated": dissipated,
            "nodes": x}


# ---------------------------------------------------------------------------------------------- config / CLI
DRIVES = ("rest_to_rest", "tabulated")


def schema() -> Schema:
    """Config schema; ``[rope]`` and the law keys of ``[contact]`` are the one-rope scenario's fields (the ropes'
    ends are pinned here: ``rope.end_condition`` is not offered)."""
    base = snare.schema().sections
    pos = dict(gt=0.0)
    return Schema({
        "closing": {
            "ring_radius_m": Field("float", 0.15, **pos, help="R_cm of both rings"),
            "open_end_distance_m": Field("float", 0.26, **pos, help="d_se at psi = 0: 2 R sin(gamma_0)"),
            "n_ropes": Field("int", 3, min=3, max=12),
            "end_time_s": Field("float", 2.5, **pos, help="simulated time (drive and hold)"),
        },
        "drive": {
            "kind": Field("str", "rest_to_rest", choices=DRIVES),
            "start_angle_deg": Field("float", 0.0, min=0.0, help="rest_to_rest: psi at the start"),
            "final_angle_deg": Field("float", 59.85, min=0.0, help="rest_to_rest: psi at the end (<= psi_max)"),
            "duration_s": Field("float", 2.0, **pos, help="rest_to_rest: duration of the move"),
            "start_time_s": Field("float", 0.0, min=0.0, help="rest_to_rest: the ring rests until then"),
            "knot_times_s": Field("floats", [0.0, 1.0, 2.0], help="tabulated: strictly increasing, >= 0"),
            "knot_angles_deg": Field("floats", [0.0, 40.0, 59.85], help="tabulated: psi at the knots"),
        },
        "rope": {**{k: f for k, f in base["rope"].items() if k not in ("bending_stiffness_N_m_rad", "end_condition")},
                 "n_sections": dataclasses.replace(base["rope"]["n_sections"], default=20),
                 "bending_rigidity_N_m2": Field("float", 0.020915, **pos, help="EI; k_tor = EI / section length")},
        "shaft": {
            "radius_m": base["shaft"]["radius_m"],
            "mass_kg": Field("float", 41.7, **pos, help="free-floating target (paper Table 4)"),
            "initial_position_m": Field("floats", [0.03, 0.04], length=2, help="in the ring plane"),
            "initial_velocity_m_s": Field("floats", [0.0, -0.02], length=2),
        },
        "contact": {**base["contact"],
                    "reference_speed_m_s": Field("float", 0.1, **pos, help="v_0 of lambda = chi k / v_0"),
                    "points_per_section": Field("int", 4, min=1, max=32, help="1 = contact at the nodes only")},
        "simulation": {
            "rtol": Field("float", 1e-6, gt=0.0, max=1e-2),
            "atol": Field("float", 1e-9, gt=0.0, max=1e-2),
            "n_save": Field("int", 2000, min=10, max=100_000),
            "max_steps": Field("int", 2_000_000, min=100),
        },
    })


def max_ring_angle(cfg: dict) -> float:
    """``psi_max = pi - 2 gamma_0`` [rad]: ring angle at which ``d_se = 2 R`` (beyond it the ropes slacken)."""
    c = cfg["closing"]
    return np.pi - 2.0 * np.arcsin(min(c["open_end_distance_m"] / (2.0 * c["ring_radius_m"]), 1.0))


def check_config(cfg: dict) -> None:
    """Cross-key checks the field ranges cannot express; raises ConfigError naming the key."""
    c, r, d, s = cfg["closing"], cfg["rope"], cfg["drive"], cfg["shaft"]
    problems = snare.ring_problems(c["open_end_distance_m"], c["ring_radius_m"], r["length_m"],
                                   "closing.open_end_distance_m", "closing.ring_radius_m")
    gap = r["length_m"] / (r["n_sections"] * cfg["contact"]["points_per_section"])
    if gap >= 2.0 * s["radius_m"] + r["diameter_m"]:
        problems.append(f"rope.n_sections: contact points {gap:g} m apart let the shaft (contact diameter "
                        f"{2 * s['radius_m'] + r['diameter_m']:g} m) slip through a rope; use more sections or "
                        "contact.points_per_section")
    psi_max = np.rad2deg(max_ring_angle(cfg))
    if d["kind"] == "rest_to_rest":
        for key in ("start_angle_deg", "final_angle_deg"):
            if d[key] > psi_max + 1e-9:
                problems.append(f"drive.{key}: must be <= psi_max = {psi_max:.4g} deg (d_se = 2 R)")
    else:
        times, angles = d["knot_times_s"], d["knot_angles_deg"]
        if len(times) < 2 or len(times) != len(angles):
            problems.append("drive.knot_times_s: needs >= 2 knots, as many as drive.knot_angles_deg")
        elif times[0] < 0.0 or np.any(np.diff(times) <= 0.0):
            problems.append("drive.knot_times_s: must start at >= 0 and increase strictly")
        if any(not 0.0 <= a <= psi_max + 1e-9 for a in angles):
            problems.append(f"drive.knot_angles_deg: must lie in [0, psi_max = {psi_max:.4g}] deg")
    start_key = "start_angle_deg" if d["kind"] == "rest_to_rest" else "knot_angles_deg"
    psi0 = np.deg2rad(d["start_angle_deg"] if d["kind"] == "rest_to_rest" else (d["knot_angles_deg"] or [0.0])[0])
    gamma0 = 0.5 * (np.pi - max_ring_angle(cfg))
    if 2.0 * c["ring_radius_m"] * np.sin(gamma0 + 0.5 * psi0) >= r["length_m"]:  # d_se(psi(0))
        problems.append(f"drive.{start_key}: the ropes must be slack at the start (d_se < rope.length_m)")
    if np.hypot(*s["initial_position_m"]) + s["radius_m"] >= c["ring_radius_m"]:
        problems.append("shaft.initial_position_m: the shaft must start inside the ring")
    if problems:
        raise ConfigError("\n".join(problems))


def build_drive(d: dict) -> Drive:
    """The ring-angle profile of the ``[drive]`` section (angles in rad)."""
    if d["kind"] == "tabulated":
        return Tabulated(d["knot_times_s"], np.deg2rad(d["knot_angles_deg"]))
    return RestToRest(np.deg2rad(d["start_angle_deg"]), np.deg2rad(d["final_angle_deg"]), d["duration_s"],
                      d["start_time_s"])


def build_model(cfg: dict) -> SnareClosing:
    """The :class:`SnareClosing` of a validated config. Rope, shaft and contact law come from the one-rope
    scenario's builder (:func:`diffspace.scenarios.snare.build_model`, same keys except that the bending
    spring is given as the rigidity ``EI``, ``k_tor = EI / l_0``, so that ``n_sections`` only refines the
    same rope); the rest bend is then turned outward (module docstring)."""
    c, s, r = cfg["closing"], cfg["shaft"], dict(cfg["rope"])
    r["bending_stiffness_N_m_rad"] = r.pop("bending_rigidity_N_m2") * r["n_sections"] / r["length_m"]
    law_keys = {k: v for k, v in cfg["contact"].items() if k not in ("reference_speed_m_s", "points_per_section")}
    one_rope = validate({"rope": r, "shaft": {"radius_m": s["radius_m"]}, "contact": law_keys,
                         "snare": {"ring_radius_m": c["ring_radius_m"], "end_distance_m": c["open_end_distance_m"]}},
                        snare.schema(), Path.cwd())
    m = snare.build_model(one_rope, s["mass_kg"])
    rope = eqx.tree_at(lambda r: r.rest_bend, m.rope, -m.rope.rest_bend)
    return SnareClosing(rope, Snare(c["ring_radius_m"], c["open_end_distance_m"], 1.0), build_drive(cfg["drive"]),
                        m.shaft, m.law, jnp.asarray(s["mass_kg"], float),
                        jnp.asarray(cfg["contact"]["reference_speed_m_s"], float), cfg["rope"]["length_m"],
                        c["n_ropes"], cfg["contact"]["points_per_section"])


def run(cfg: dict, out: Path) -> dict:
    """Initial static shapes, the closing dynamics, the quasi-static capture zone; writes summary.json,
    timeseries.csv/.npz, capture_zone.csv and the plots."""
    from .snare_closing_results import analyse, axis_distance, capture_zone, write_plots

    check_config(cfg)
    sh, sim = cfg["shaft"], cfg["simulation"]
    model = build_model(cfg)
    print("closing: initial static rope shapes")
    y0, ok = eqx.filter_jit(initial_state)(model, jnp.asarray(sh["initial_position_m"]), jnp.asarray(sh["initial_velocity_m_s"]))
    if not bool(ok):
        raise SolverFailure("closing: initial static rope shape (Newton on Eqs. (35)-(36)) did not converge")
    x0, _ = rope_nodes(model, 0.0, y0[0], y0[1])
    clearance = min(float(axis_distance(xk - y0[2])) for xk in x0) - float(model.rope.radius + model.shaft.radius)
    if clearance <= 0.0:
        raise ConfigError(f"shaft.initial_position_m: the shaft overlaps a rope at t = 0 (clearance {clearance:.3g} m)")
    print("closing: quasi-static capture zone")
    zone = capture_zone(model, y0[0][0])
    if not zone["converged"]:
        raise SolverFailure("closing: quasi-static capture-zone solves did not converge")
    t_end = cfg["closing"]["end_time_s"]
    print(f"closing: dynamics over {t_end:g} s ({model.n_ropes} ropes x {model.rope.n_sections} sections; "
          "explicit steps of ~1e-5 s, expect a few minutes)")
    sol = eqx.filter_jit(closing_solve)(model, y0, t_end, rtol=sim["rtol"], atol=sim["atol"], n_save=sim["n_save"],
                                        max_steps=sim["max_steps"])
    if sol.result != diffrax.RESULTS.successful:
        raise SolverFailure(f"closing: dynamic solve failed ({diffrax.RESULTS[sol.result]}) after "
                            f"{int(sol.stats['num_steps'])} steps (raise simulation.max_steps)")
    res = analyse(model, sol, zone)
    write_summary(out, res["summary"])
    write_timeseries(out, res["series"])
    write_timeseries(out, {"ring_angle_deg": np.rad2deg(zone["psi_rad"]), "zone_radius_m": zone["radius_m"]},
                     name="capture_zone")
    write_plots(out, res, model)
    print_summary(res["summary"], "snare closing")
    return res["summary"]


__all__ = ["SnareClosing", "schema", "run", "build_model", "check_config", "closing_solve", "initial_state", "sample"]
