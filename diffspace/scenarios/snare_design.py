r"""Snare capture physics (seed: Cai et al. 2021, Aerospace 8:381, Sections 3.1.2, 3.2 and 4.2): ring
geometry, the rope's initial static shape, the quasi-static virtual spring and the full dynamic impact.

Geometry (paper Figs. 5 and 7). Fixed and rotating rings share the plane ``z = 0`` and the radius ``R_cm``,
centred at the origin. A rope runs from its fixed-ring point ``A`` to its rotating-ring point ``B``; the chord
is symmetric about the ``-y`` axis at ``y = -R cos(gamma)``, ``d_se = 2 R sin(gamma)`` (paper:
``d_se`` in ``[2 R sin(gamma_0), 2 R]``). Turning the rotating ring by ``psi(t) = rate t`` moves ``B`` along
the ring. The rope bows towards the ring centre (+y), where the grapple shaft (axis along z) is, so the shaft
pushes a rope *against* its bow (``approach = "against_bow"``): the rope softens as it is pushed flat.
``"along_bow"`` (shaft outside the loop) is kept for comparison: there the rope goes taut within ~1 cm.

End fittings (``rope.end_condition = "clamped"``, :mod:`diffspace.contact.rope`) are fixed to their rings.
With ``c_X = -X / |X|`` the inward ring radius at end ``X`` and ``Rz`` a rotation about the ring axis (+z),
the fitting axes (along the rope, node order) are ``t_A = Rz(-alpha_A) c_A`` and ``t_B = -Rz(alpha_B) c_B``:
``t_B`` turns with the rotating ring (and with ``d_se``). ``Snare.attach_angles`` come from an **unstressed
installation** (:func:`install_clamps`): laid in at ``d_se(t = 0)`` with free ends, the rope settles into
the pinned equilibrium and the fittings are tightened along its end sections (``t_A = e_1``, ``t_B = e_N``),
so the installed shape is the same for both end conditions and the clamps add only stiffness (and moments
once the ring turns). A fitting along the rest-curvature tangent would pre-load the ends arbitrarily: the
26 deg rest bend cannot span d_se = 0.26 m with a 0.30 m rope.

Two impact models, both pure JAX (jit/vmap/grad):

* **virtual spring** (Section 3.2): static displacement-controlled solves at node ``n`` give ``F_c(delta_v)``
  (Eqs. (40)-(41)); a polynomial without constant term (``F_c(0) = 0``) is fitted; the impact is the 1-D
  ``m delta'' = -(k_v(delta) delta + c_v delta')`` of Eq. (43), integrated with events by
  :func:`diffspace.contact.simulate_impact`;
* **full dynamic rope**: all nodes plus a translating rigid shaft with the :class:`~diffspace.contact.ContactLaw`
  at every node (Tsit5; no events, the ``n = 1.5`` law is C1 at touch and release).
"""

from __future__ import annotations

import dataclasses

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from ..contact import simulate_impact
from ..bodies.rope import Rope, Shaft, assemble, equilibrium, pressed_equilibrium, rope_accelerations
from ..spatial import safe_norm

APPROACHES = ("against_bow", "along_bow")


class Snare(eqx.Module):
    """One rope of the snare: ring radius ``R`` [m], end distance at ``t = 0`` [m], ring rate [rad/s] and the
    fitting angles ``(alpha_A, alpha_B)`` [rad] of clamped ends (see the module notes; unused if pinned)."""

    ring_radius: Float[Array, ""]
    end_distance: Float[Array, ""]
    ring_rate: Float[Array, ""]
    attach_angles: Float[Array, "2"]

    def __init__(self, ring_radius, end_distance, ring_rate=0.0, attach_angles=(0.0, 0.0)):
        self.ring_radius = jnp.asarray(ring_radius, float)
        self.end_distance = jnp.asarray(end_distance, float)
        self.ring_rate = jnp.asarray(ring_rate, float)
        self.attach_angles = jnp.broadcast_to(jnp.asarray(attach_angles, float), (2,))

    def ends(self, t=0.0) -> tuple[Float[Array, "3"], Float[Array, "3"]]:
        """Fixed-ring point ``A`` and rotating-ring point ``B(t)`` (world)."""
        r = self.ring_radius
        g0 = jnp.arcsin(self.end_distance / (2.0 * r))
        a = -0.5 * jnp.pi - g0
        b = -0.5 * jnp.pi + g0 + self.ring_rate * t
        return r * jnp.stack([jnp.cos(a), jnp.sin(a), 0.0 * a]), r * jnp.stack([jnp.cos(b), jnp.sin(b), 0.0 * b])

    def end_states(self, t):
        """``(A, B, dA/dt, dB/dt)`` at time ``t``."""
        (a, b), (va, vb) = jax.jvp(self.ends, (jnp.asarray(t, float),), (jnp.ones(()),))
        return a, b, va, vb

    def attachments(self, t=0.0) -> Float[Array, "2 3"]:
        """Fitting axes ``[t_A, t_B(t)]`` (unit, along the rope in node order), fixed in their rings."""
        a, b = self.ends(t)

        def turn(v, angle):  # rotation about +z
            c, s = jnp.cos(angle), jnp.sin(angle)
            return jnp.stack([c * v[0] - s * v[1], s * v[0] + c * v[1], v[2]])

        al = self.attach_angles
        return jnp.stack([turn(-a / self.ring_radius, -al[0]), -turn(-b / self.ring_radius, al[1])])

    def attachment_states(self, t):
        """``(attach (2, 3), d attach / dt)`` at time ``t``."""
        return jax.jvp(self.attachments, (jnp.asarray(t, float),), (jnp.ones(()),))

    def end_distance_at(self, t):
        a, b = self.ends(t)
        return jnp.linalg.norm(b - a)


class SnareModel(eqx.Module):
    """Everything an impact on one rope needs. Arrays are differentiable; ``length`` and the polynomial
    ``degree`` are static. ``mass``: effective striking mass [kg]; ``virtual_damping``: ``c_v`` [N s/m];
    ``fit_depths``: pressing depths of the static solves [m]; ``fit_max_force``: the force range
    ``[0, F_A]`` of the polynomial fit [N] (paper Section 3.2, step (1))."""

    rope: Rope
    snare: Snare
    shaft: Shaft
    law: object  # canonical ContactLaw (ChiLaw) between shaft and rope nodes
    mass: Float[Array, ""]
    virtual_damping: Float[Array, ""]
    fit_depths: Float[Array, " K"]
    fit_max_force: Float[Array, ""]
    length: float = eqx.field(static=True)
    degree: int = eqx.field(static=True, default=3)
    approach: str = eqx.field(static=True, default="against_bow")


def arc_guess(first, last, length, n_sections: int, bow=(0.0, 1.0, 0.0)) -> Float[Array, "N1 3"]:
    """Nodes of a circular arc of the given length through the two ends, bulging towards ``bow`` (the
    starting guess of the static solve; gradients stopped). Needs ``|last - first| < length``."""
    first, last = jax.lax.stop_gradient((jnp.asarray(first, float), jnp.asarray(last, float)))
    d = jnp.linalg.norm(last - first)

    def newton(theta, _):  # sin(t/2) / (t/2) = d / L
        h = 0.5 * theta
        return theta - (jnp.sin(h) / h - d / length) / (0.5 * (jnp.cos(h) * h - jnp.sin(h)) / h**2), None

    theta, _ = jax.lax.scan(newton, jnp.asarray(2.0), None, length=60)
    radius = length / theta
    s = jnp.linspace(-0.5, 0.5, n_sections + 1) * theta
    ex = (last - first) / d
    bow = jnp.asarray(bow, float)
    ey = bow - (bow @ ex) * ex
    ey = ey / jnp.linalg.norm(ey)
    mid = 0.5 * (first + last)
    return mid + jnp.outer(radius * jnp.sin(s), ex) + jnp.outer(radius * (jnp.cos(s) - jnp.cos(0.5 * theta)), ey)


def initial_shape(model: SnareModel):
    """Static equilibrium shape at ``t = 0`` (Eqs. (35)-(36)): ``(x_all (N+1, 3), converged)``."""
    first, last = model.snare.ends(0.0)
    guess = arc_guess(first, last, model.length, model.rope.n_sections)
    xi, ok = equilibrium(model.rope, guess[1:-1], first, last, attach=model.snare.attachments(0.0))
    return assemble(xi, first, last), ok


def installed_attach_angles(model: SnareModel) -> Float[Array, "2"]:
    """Fitting angles ``(alpha_A, alpha_B)`` of an unstressed installation: the end sections of the *pinned*
    equilibrium at ``t = 0`` measured from the inward ring radii (module notes). Differentiable (through
    the pinned solve by the implicit function theorem)."""
    pinned = eqx.tree_at(lambda m: m.rope, model, dataclasses.replace(model.rope, end_condition="pinned"))
    x, _ = initial_shape(pinned)

    def angle(u, w):  # signed angle of the rotation u -> w about +z
        return jnp.arctan2(u[0] * w[1] - u[1] * w[0], u @ w)

    e_a, e_b, c_a, c_b = (v / jnp.linalg.norm(v) for v in (x[1] - x[0], x[-1] - x[-2], -x[0], -x[-1]))
    return jnp.stack([angle(e_a, c_a), angle(c_b, -e_b)])


def install_clamps(model: SnareModel) -> SnareModel:
    """``model`` with ``snare.attach_angles`` of an unstressed installation (no-op for pinned ropes)."""
    if model.rope.end_condition != "clamped":
        return model
    return eqx.tree_at(lambda m: m.snare.attach_angles, model, installed_attach_angles(model))


def contact_direction(x: Float[Array, "N1 3"], node, approach: str = "against_bow") -> Float[Array, "3"]:
    """Unit in-plane normal of the rope at ``node`` (0-based): the shaft's approach direction ``u``.
    ``against_bow`` points from the ring centre outwards (the shaft pushes the bow back)."""
    if approach not in APPROACHES:
        raise ValueError(f"approach must be one of {APPROACHES}, got {approach!r}")
    tangent = x[node + 1] - x[node - 1]
    normal = jnp.stack([tangent[1], -tangent[0], 0.0 * tangent[0]])
    normal = normal / jnp.linalg.norm(normal)
    outward = jnp.where(normal @ x[node] > 0.0, 1.0, -1.0)  # ring centre at the origin
    return (1.0 if approach == "against_bow" else -1.0) * outward * normal


# ---------------------------------------------------------------------------------------------- virtual spring
def pressing_curve(model: SnareModel, x_eq, node, depths: Float[Array, " K"] | None = None, direction=None):
    """Static contact force ``F_c`` [N] at each pressing depth ``delta_v`` of node ``node`` (0-based) along
    the approach direction (or ``direction``) (Eqs. (40)-(41)): displacement-controlled continuation, a
    ``lax.scan`` over increasing depths, each Newton solve started from the previous shape.
    Returns ``(F_c (K,), converged)``."""
    depths = model.fit_depths if depths is None else depths
    u = contact_direction(x_eq, node, model.approach) if direction is None else jnp.asarray(direction, float)
    first, last = model.snare.ends(0.0)
    attach = model.snare.attachments(0.0)
    x_ref = x_eq[1:-1]

    def body(xi, depth):
        shift = (xi[node - 1] - x_ref[node - 1]) @ u  # pressed_equilibrium measures from its start shape
        xn, fc, ok = pressed_equilibrium(model.rope, xi, first, last, node, u, depth - shift, attach=attach)
        return xn, (fc, ok)

    _, (forces, ok) = jax.lax.scan(body, x_ref, depths)
    return forces, jnp.all(ok)


def fit_polynomial(depths, forces, degree: int, weights=None) -> Float[Array, " p"]:
    """Least-squares ``F_c = sum_{j=1..degree} a_j delta^j`` (no constant term, ``F_c(0) = 0``), optionally
    weighted (0 drops a point); returns ``a_1 .. a_degree``, ``a_1 = k_v(0)``. Differentiable."""
    w = jnp.ones_like(forces) if weights is None else weights
    basis = jnp.stack([depths**j for j in range(1, degree + 1)], axis=1)
    scale = jnp.max(jnp.abs(basis * w[:, None]), axis=0)
    coef, *_ = jnp.linalg.lstsq(w[:, None] * basis / scale, w * forces)
    return coef / scale


def virtual_spring(model: SnareModel, x_eq, node):
    """The paper's virtual spring at ``node`` (0-based): static pressing curve over ``model.fit_depths`` and
    the polynomial fitted to the points up to the first one whose force exceeds ``F_A = fit_max_force``
    (Section 3.2: fit over ``F_c in [0, F_A]``; a softening node that never reaches ``F_A`` uses the whole
    depth range). Returns ``(coefficients, forces, fit_limit_depth [m], converged)``."""
    forces, ok = pressing_curve(model, x_eq, node)
    keep = jnp.cumprod(forces <= model.fit_max_force).astype(float)
    keep = keep.at[: model.degree + 1].set(1.0)  # always enough points to determine the polynomial
    limit = jnp.max(jnp.where(keep > 0.0, model.fit_depths, 0.0))
    return fit_polynomial(model.fit_depths, forces, model.degree, keep), forces, limit, ok


def fit_surface(depths, end_distances, forces, degree: int, degree_d: int = 2, d_ref: float = 0.26, weights=None):
    """Paper Eq. (41): ``F_c(delta, d_se) = sum_{i=1..degree} sum_{j=0..degree_d} c_ij delta^i (d_se - d_ref)^j``
    fitted to a grid ``forces (D, K)`` (optional 0/1 ``weights (D, K)``); returns ``c (degree, degree_d + 1)``."""
    dd, dl = jnp.meshgrid(jnp.asarray(end_distances) - d_ref, jnp.asarray(depths), indexing="ij")
    w = jnp.ones(dd.size) if weights is None else jnp.asarray(weights, float).ravel()
    terms = w[:, None] * jnp.stack([(dl**i * dd**j).ravel() for i in range(1, degree + 1) for j in range(degree_d + 1)], 1)
    scale = jnp.max(jnp.abs(terms), axis=0)
    coef, *_ = jnp.linalg.lstsq(terms / scale, w * jnp.asarray(forces).ravel())
    return (coef / scale).reshape(degree, degree_d + 1)


def eval_surface(coef, depth, end_distance, d_ref: float = 0.26):
    i = jnp.arange(1, coef.shape[0] + 1)[:, None]
    j = jnp.arange(coef.shape[1])[None, :]
    return jnp.sum(coef * depth**i * (end_distance - d_ref) ** j)


class VirtualSpringLaw(eqx.Module):
    r"""The paper's dynamic virtual-spring contact, Eq. (43): ``F = k_v(delta) delta + c_v delta_dot`` with
    ``k_v(delta) delta = sum_j a_j delta^j`` (Eqs. (41)-(42)), clamped at zero (never adhesive).

    Duck-types :class:`~diffspace.contact.forces.ChiLaw`, so :func:`diffspace.contact.simulate_impact`
    integrates it with touch and release events. ``stiffness = a_1`` and ``exponent = 1`` set only the
    integrator's scales; ``force_scale`` [N] makes the release indicator O(1).
    """

    coefficients: Float[Array, " p"]
    damping_coefficient: Float[Array, ""]
    force_scale: Float[Array, ""]

    @property
    def stiffness(self):
        return self.coefficients[0]

    @property
    def exponent(self):
        return jnp.ones(())

    def elastic_force(self, delta):
        delta = jnp.asarray(delta, float)
        powers = jnp.stack([delta ** (j + 1) for j in range(self.coefficients.shape[0])], axis=-1)
        return jnp.where(delta > 0.0, powers @ self.coefficients, 0.0)

    def damping(self, impact_speed):
        return self.damping_coefficient

    def unclamped_force(self, delta, delta_dot, impact_speed):
        delta = jnp.asarray(delta, float)
        return jnp.where(delta > 0.0, self.elastic_force(delta) + self.damping_coefficient * delta_dot, 0.0)

    def force(self, delta, delta_dot, impact_speed):
        f = self.unclamped_force(delta, delta_dot, impact_speed)
        return jnp.where(f > 0.0, f, 0.0)

    def first_touch_force(self, impact_speed):
        return self.damping_coefficient * jnp.asarray(impact_speed, float)

    def release_indicator(self, delta, delta_dot, impact_speed):
        return self.unclamped_force(delta, delta_dot, impact_speed) / self.force_scale


def virtual_impact(model: SnareModel, coefficients, speed, *, t_max=5.0, n_save: int = 0, adjoint="reverse"):
    """Impact of the striking mass on the virtual spring (Eq. (43)); dict of :func:`simulate_impact`."""
    speed = jnp.asarray(speed, float)
    law = VirtualSpringLaw(coefficients, model.virtual_damping, speed * jnp.sqrt(coefficients[0] * model.mass))
    return simulate_impact(law, model.mass, speed, t_max=t_max, n_save=n_save, adjoint=adjoint)


# ---------------------------------------------------------------------------------------------- full dynamics
def rope_impact_solve(model: SnareModel, x_eq, node, speed, t_end, *, gap=0.0, rtol=1e-6, atol=1e-9,
                      n_save: int = 600, max_steps: int = 200_000, adjoint: str = "reverse"):
    r"""Full dynamic impact: the shaft (isotropic ``model.mass``, translating) moves with ``speed`` along the
    approach direction of node ``node`` (0-based) and touches it after ``gap`` [m]; the rope starts at rest
    in ``x_eq``; the rotating-ring end follows the drive. State: interior nodes, shaft position/velocity and
    the contact impulse. Tsit5 with a PID controller; the axial modes set the step (``k_tes`` enters as
    ``omega ~ 2 sqrt(k_tes / m_i)``, hence the axial-rigidity convergence study in ``experiments/``)."""
    rope, snare, shaft = model.rope, model.snare, model.shaft
    u = contact_direction(x_eq, node, model.approach)
    speed = jnp.asarray(speed, float)

    def field(t, y, args):
        xi, vi, p, w, _ = y
        a, b, va, vb = snare.end_states(t)
        attach, attach_rate = snare.attachment_states(t)
        x, v = assemble(xi, a, b), assemble(vi, va, vb)
        f_nodes, _ = shaft.forces(model.law, rope, x, v, p, w, speed)
        f_shaft = -jnp.sum(f_nodes, axis=0)
        return vi, rope_accelerations(rope, x, v, f_nodes, attach, attach_rate), w, f_shaft / model.mass, f_shaft

    p0 = x_eq[node] - (shaft.radius + rope.radius + gap) * u
    y0 = (x_eq[1:-1], jnp.zeros_like(x_eq[1:-1]), p0, speed * u, jnp.zeros(3))
    sol = diffrax.diffeqsolve(
        diffrax.ODETerm(field), diffrax.Tsit5(), t0=0.0, t1=t_end, dt0=None, y0=y0,
        saveat=diffrax.SaveAt(ts=jnp.linspace(0.0, t_end, n_save)),
        stepsize_controller=diffrax.PIDController(rtol=rtol, atol=atol), max_steps=max_steps, throw=False,
        adjoint=diffrax.ForwardMode() if adjoint == "forward" else diffrax.RecursiveCheckpointAdjoint(),
    )
    return sol, u


def parabolic_peak(values):
    """Maximum of sampled values refined by the parabola through the best sample and its neighbours."""
    j = jnp.clip(jnp.argmax(values), 1, values.shape[0] - 2)
    a, b, c = values[j - 1], values[j], values[j + 1]
    curv = a - 2.0 * b + c
    safe = jnp.where(curv < 0.0, curv, -1.0)
    return jnp.where(curv < 0.0, b - (c - a) ** 2 / (8.0 * safe), jnp.max(values))


def dynamic_impact(model: SnareModel, x_eq, node, speed, t_end, **settings) -> dict:
    """Full-dynamic impact results (SI): ``peak_force_N`` (norm of the total contact force on the shaft,
    parabolic refinement of the samples), ``impulse_N_s``, ``rebound_speed_m_s`` and ``restitution`` at
    ``t_end``, ``max_travel_m`` (shaft, along the approach), ``max_node_displacement_m`` (delta_v),
    ``separated`` (force zero and shaft receding at ``t_end``), ``ok`` (solver), and the series."""
    sol, u = rope_impact_solve(model, x_eq, node, speed, t_end, **settings)
    xi, vi, p, w, impulse = sol.ys
    a, b, va, vb = jax.vmap(model.snare.end_states)(sol.ts)

    def sample(xi, vi, p, w, a, b, va, vb):
        x, v = assemble(xi, a, b), assemble(vi, va, vb)
        f_nodes, mags = model.shaft.forces(model.law, model.rope, x, v, p, w, speed)
        return safe_norm(jnp.sum(f_nodes, axis=0)), mags  # zero between contacts: safe gradient

    force, mags = jax.vmap(sample)(xi, vi, p, w, a, b, va, vb)
    p0 = p[0]
    rebound = -(w[-1] @ u)
    return {
        "peak_force_N": parabolic_peak(force),
        "impulse_N_s": safe_norm(impulse[-1]),
        "rebound_speed_m_s": rebound,
        "restitution": rebound / speed,
        "max_travel_m": jnp.max((p - p0) @ u),
        "max_node_displacement_m": jnp.max((xi[:, node - 1] - x_eq[node]) @ u),
        "separated": (force[-1] == 0.0) & (rebound > 0.0),
        "ok": sol.result == diffrax.RESULTS.successful,
        "num_steps": sol.stats["num_steps"],
        "series_time_s": sol.ts, "series_force_N": force, "series_node_forces_N": mags,
        "series_travel_m": (p - p0) @ u, "series_inner_nodes": xi,
    }


def linear_contact_time(model: SnareModel, k0) -> Array:
    """Half period ``pi sqrt(m / k_v(0))`` of the linearised virtual spring [s]."""
    return jnp.pi * jnp.sqrt(model.mass / k0)


def dynamic_horizon(model: SnareModel, coefficients, speed, factor: float = 1.5, adjoint="reverse") -> Array:
    """Horizon of a full dynamic impact: ``factor`` times the longer of the linearised contact time and the
    virtual-spring impact's contact duration (softening nodes release late). Not differentiated."""
    model, coefficients, speed = jax.lax.stop_gradient((model, coefficients, speed))
    t_lin = linear_contact_time(model, coefficients[0])
    virt = virtual_impact(model, coefficients, speed, t_max=20.0 * t_lin, adjoint=adjoint)
    duration = jnp.where(virt["separated"], virt["contact_duration_s"], t_lin)
    return factor * jnp.maximum(duration, t_lin)


def snare_contact(model: SnareModel, node, speed, method: str = "dynamic", *, horizon_factor: float = 1.5,
                  **settings) -> dict:
    """Impact of the shaft on node ``node`` (**1-based**, paper numbering) at approach ``speed`` [m/s].

    ``method="dynamic"``: full rope dynamics; ``"virtual"``: the paper's virtual spring. Returns a dict with
    ``peak_force_N``, ``impulse_N_s``, ``rebound_speed_m_s``, ``restitution``, ``k_v0_N_m`` (the static
    stiffness at the node), ``max_indentation_m`` and ``ok``. Pure (jit/vmap/grad over ``model``, ``node``,
    ``speed``); the dynamic horizon comes from :func:`dynamic_horizon`. ``within_fit_range``: the virtual
    spring's maximum indentation lies inside its fitted range.
    """
    if method not in ("dynamic", "virtual"):
        raise ValueError(f"method must be 'dynamic' or 'virtual', got {method!r}")
    n0 = jnp.asarray(node) - 1
    x_eq, ok_eq = initial_shape(model)
    coef, _, fit_limit, ok_fit = virtual_spring(model, x_eq, n0)
    if method == "virtual":
        t_lin = linear_contact_time(model, coef[0])
        r = virtual_impact(model, coef, speed, t_max=20.0 * t_lin, adjoint=settings.get("adjoint", "reverse"))
        return {"peak_force_N": r["peak_force_N"], "impulse_N_s": r["impulse_N_s"],
                "rebound_speed_m_s": r["detached_velocity_m_s"], "restitution": r["restitution"],
                "max_indentation_m": r["max_indentation_m"], "contact_duration_s": r["contact_duration_s"],
                "k_v0_N_m": coef[0], "within_fit_range": r["max_indentation_m"] <= fit_limit,
                "ok": ok_eq & ok_fit & r["separated"]}
    t_end = dynamic_horizon(model, coef, speed, horizon_factor, settings.get("adjoint", "reverse"))
    r = dynamic_impact(model, x_eq, n0, speed, t_end, **settings)
    return {"peak_force_N": r["peak_force_N"], "impulse_N_s": r["impulse_N_s"],
            "rebound_speed_m_s": r["rebound_speed_m_s"], "restitution": r["restitution"],
            "max_indentation_m": r["max_node_displacement_m"], "k_v0_N_m": coef[0],
            "within_fit_range": r["max_node_displacement_m"] <= fit_limit,
            "ok": ok_eq & ok_fit & r["ok"] & r["separated"]}
