r"""Independent models of one snare rope's statics (plain NumPy/SciPy; no diffspace code): a planar segmented
rope solved by Newton, and the planar extensible elastica (Kirchhoff rod) solved as a boundary-value problem.

**Geometry** (the snare of Cai et al. 2021, Aerospace 8:381, Figs. 5 and 7). Both ring points lie on a circle
of radius ``R`` about the origin, symmetric about the ``-y`` axis: ``A = (-d/2, -sqrt(R^2 - d^2/4))``,
``B = (d/2, -sqrt(R^2 - d^2/4))`` with the end distance ``d = d_se``. The rope bows towards the ring centre
(+y); its unstressed shape turns by ``beta_tot = -26 deg`` (clockwise) from A to B. Everything is in the ring
plane: the loads (ring points, a shaft whose axis is normal to the plane) keep a planar rope planar.

**Segmented rope** (:class:`Chain`), ``N`` sections of rest length ``l = L / N``, nodes ``x_0 .. x_N``:

.. math:: V = \sum_i \tfrac12 \tfrac{EA}{l} (|x_{i+1} - x_i| - l)^2
          + \sum_{j=1}^{N-1} \tfrac12 k (\beta_j - \beta_0)^2 + [\tfrac12 k (\phi_0 - \phi_A)^2
          + \tfrac12 k (\phi_B - \phi_{N-1})^2]_\text{clamped},

with section headings ``phi_i = atan2(x_{i+1} - x_i)``, node bends ``beta_j = phi_j - phi_{j-1}`` (wrapped to
(-pi, pi]), ``k = EI / l``, ``beta_0 = beta_tot / (N - 1)`` and, for clamped ends, fitting headings
``phi_A``, ``phi_B``. The clamp springs are ``c k``: ``c = 1`` is diffspace's convention (a clamp is a node
like the others), ``c = 2`` the continuum-consistent one (the end bend is concentrated in a half cell); the
brackets above are written for ``c = 1``. The gradient is analytic (``d phi / d d = (-d_y, d_x) / |d|^2``); equilibria are Newton
solves whose Jacobian is central differences of that gradient (banded: a node couples with nodes within two),
so the root is the analytic gradient's.

**Elastica** (:func:`solve_rod`). Reference arc length ``s``, tangent angle ``theta``, internal force ``n`` and
moment ``m`` exerted on ``[0, s]`` by ``[s, L]``; stretch ``eps = n . t / EA``:

.. math:: x' = (1 + \epsilon) t,\quad \theta' = \kappa_0 + m / EI,\quad
          m' = -(1 + \epsilon)(t \times n),\quad n' = 0 \ \ (s \ne s_c),\quad n(s_c^+) = n(s_c^-) - F u,

``kappa_0 = beta_tot / L``; ends ``x(0) = A``, ``x(L) = B`` and ``m = 0`` (pinned) or ``theta = theta_A,
theta_B`` (clamped). The shaft pushes the material point ``s_c`` with force ``F`` along ``u`` (frictionless,
displacement-controlled: ``(x(s_c) - x_0(s_c)) . u = delta``). Two segments ``[0, s_c]``, ``[s_c, L]`` on one
unit interval, :func:`scipy.integrate.solve_bvp`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg
from scipy.integrate import solve_bvp


@dataclass(frozen=True)
class RopeStatics:
    """One rope between its rings: length [m], ``EI`` [N m^2], ``EA`` [N], signed total rest bend [rad], ring
    radius and end distance [m]."""

    length: float
    bending_rigidity: float
    axial_rigidity: float
    rest_bend_total: float
    ring_radius: float
    end_distance: float

    def ends(self) -> tuple[np.ndarray, np.ndarray]:
        half = 0.5 * self.end_distance
        y = -np.sqrt(self.ring_radius**2 - half**2)
        return np.array([-half, y]), np.array([half, y])


def wrap(angle):
    return (np.asarray(angle) + np.pi) % (2.0 * np.pi) - np.pi


def outward_normal(tangent, point, against_bow: bool = True) -> np.ndarray:
    """Unit normal of ``tangent`` pointing away from the ring centre (against the bow) or towards it."""
    normal = np.array([tangent[1], -tangent[0]]) / np.linalg.norm(tangent)
    normal = normal if normal @ point > 0.0 else -normal
    return normal if against_bow else -normal


# ---------------------------------------------------------------------------------------------- segmented rope
class Chain:
    """The segmented rope of the module notes; ``clamps = (phi_A, phi_B)`` [rad] or ``None`` (pinned)."""

    def __init__(self, rope: RopeStatics, n_sections: int, clamps=None, clamp_factor: float = 1.0):
        self.rope, self.n, self.clamp_factor = rope, int(n_sections), clamp_factor
        self.rest = rope.length / self.n
        self.k_axial = rope.axial_rigidity / self.rest
        self.k_bend = rope.bending_rigidity / self.rest
        self.beta0 = rope.rest_bend_total / (self.n - 1)
        self.clamps = clamps

    def with_clamps(self, clamps) -> Chain:
        return Chain(self.rope, self.n, clamps, self.clamp_factor)

    def bend_strains(self, x) -> tuple[np.ndarray, np.ndarray]:
        """``(beta_j - beta_0)`` at the interior nodes and the clamp bends (empty if pinned)."""
        d = np.diff(x, axis=0)
        phi = np.arctan2(d[:, 1], d[:, 0])
        inner = wrap(np.diff(phi)) - self.beta0
        if self.clamps is None:
            return inner, np.zeros(0)
        return inner, wrap(np.array([phi[0] - self.clamps[0], self.clamps[1] - phi[-1]]))

    def energy(self, x) -> float:
        stretch = np.linalg.norm(np.diff(x, axis=0), axis=1) - self.rest
        inner, clamp = self.bend_strains(x)
        return 0.5 * self.k_axial * stretch @ stretch + 0.5 * self.k_bend * (inner @ inner + self.clamp_factor * clamp @ clamp)

    def gradient(self, x) -> np.ndarray:
        """``dV/dx`` (N+1, 2), analytic."""
        d = np.diff(x, axis=0)
        length = np.linalg.norm(d, axis=1)
        inner, clamp = self.bend_strains(x)
        moment = self.k_bend * np.concatenate([[0.0], inner, [0.0]])  # dV/d beta_j, zero past the ends
        d_phi = moment[:-1] - moment[1:]  # beta_j = phi_j - phi_{j-1}
        if self.clamps is not None:  # clamp springs c k: dV/d phi_0 = c k (phi_0 - phi_A), ...
            d_phi[0] += self.clamp_factor * self.k_bend * clamp[0]
            d_phi[-1] -= self.clamp_factor * self.k_bend * clamp[1]
        perp = np.stack([-d[:, 1], d[:, 0]], axis=1) / length[:, None] ** 2
        g_d = (self.k_axial * (length - self.rest) / length)[:, None] * d + d_phi[:, None] * perp
        g = np.zeros_like(x)
        g[1:] += g_d
        g[:-1] -= g_d
        return g

    def nodes(self, inner) -> np.ndarray:
        a, b = self.rope.ends()
        return np.concatenate([a[None], np.reshape(inner, (-1, 2)), b[None]])

    def arc_guess(self) -> np.ndarray:
        """Interior nodes on the circular arc of length ``L`` through A and B bowing towards +y."""
        a, b = self.rope.ends()
        chord, length = np.linalg.norm(b - a), self.rope.length
        if chord >= length * (1.0 - 1e-12):  # taut: the straight chord
            return a + np.linspace(0.0, 1.0, self.n + 1)[1:-1, None] * (b - a)
        angle = 2.0  # total turning angle of the arc: sin(angle/2) / (angle/2) = chord / length
        for _ in range(100):
            h = 0.5 * angle
            angle -= (np.sin(h) / h - chord / length) / (0.5 * (h * np.cos(h) - np.sin(h)) / h**2)
        radius = length / angle
        s = np.linspace(-0.5, 0.5, self.n + 1)[1:-1] * angle
        return 0.5 * (a + b) + np.stack([radius * np.sin(s), radius * (np.cos(s) - np.cos(0.5 * angle))], 1)

    def hessian(self, x) -> np.ndarray:
        """``d^2 V / dx dx`` of the interior nodes (2(N-1) square): central differences of the analytic
        gradient, perturbing every fifth node together (a node's gradient depends on nodes within two)."""
        n_inner, h = self.n - 1, 1e-7 * self.rest
        hess = np.zeros((n_inner, 2, n_inner, 2))
        for group in range(5):
            for axis in range(2):
                step = np.zeros_like(x)
                step[1 + group:-1:5, axis] = h
                column = (self.gradient(x + step) - self.gradient(x - step))[1:-1] / (2.0 * h)
                for node in range(group, n_inner, 5):
                    near = slice(max(node - 2, 0), node + 3)
                    hess[near, :, node, axis] = column[near]
        return hess.reshape(2 * n_inner, 2 * n_inner)

    def equilibrium(self, guess=None) -> np.ndarray:
        """All nodes (N+1, 2) at zero load."""
        def residual(z):
            x = self.nodes(z)
            return self.gradient(x)[1:-1].ravel() / self.k_axial, self.hessian(x) / self.k_axial

        return self.nodes(newton(residual, (self.arc_guess() if guess is None else guess).ravel(), self.rest))

    def installed(self) -> Chain:
        """The chain clamped along the end sections of its pinned equilibrium (unstressed installation)."""
        x = self.with_clamps(None).equilibrium()
        d = np.diff(x[[0, 1, -2, -1]], axis=0)[[0, 2]]
        return self.with_clamps(tuple(np.arctan2(d[:, 1], d[:, 0])))

    def pressing_curve(self, x0, node: int, direction, depths) -> tuple[np.ndarray, np.ndarray]:
        """Forces [N] pushing node ``node`` (0-based) by ``depths`` along ``direction`` (displacement control,
        continuation from ``x0``) and the last shape. Unknowns: interior nodes and the force ``F``."""
        u = np.asarray(direction, float)
        anchor = x0[node] @ u
        pick = np.zeros(2 * (self.n - 1))
        pick[2 * (node - 1):2 * node] = u
        z = np.concatenate([x0[1:-1].ravel(), [0.0]])
        forces = []
        for depth in depths:
            def residual(z, depth=depth):
                x = self.nodes(z[:-1])
                r = np.concatenate([(-self.gradient(x)[1:-1].ravel() + z[-1] * pick) / self.k_axial,
                                    [x[node] @ u - anchor - depth]])
                jac = np.block([[-self.hessian(x) / self.k_axial, pick[:, None] / self.k_axial],
                                [pick[None], np.zeros((1, 1))]])
                return r, jac

            z = newton(residual, z, self.rest)
            forces.append(z[-1])
        return np.array(forces), self.nodes(z[:-1])


def newton(residual, z, length_scale: float, tol: float = 1e-13, max_iter: int = 50) -> np.ndarray:
    """Newton on ``residual(z) -> (r, dr/dz) = 0`` (``r`` in metres) until ``|r| < tol * length_scale``."""
    for _ in range(max_iter):
        r, jac = residual(z)
        if np.max(np.abs(r)) < tol * length_scale:
            return z
        z = z - scipy.linalg.solve(jac, r)
    raise RuntimeError(f"Newton did not converge: |residual| = {np.max(np.abs(residual(z)[0])):.3e} m")


# ---------------------------------------------------------------------------------------------- elastica
@dataclass(frozen=True)
class RodSolution:
    """A solved rod: ``sol`` (scipy BVP solution over the two segments), contact arc length ``s_c`` and force
    ``force`` [N]."""

    sol: object
    s_c: float
    force: float
    length: float

    def state(self, s) -> np.ndarray:
        """``(x, y, theta, m, n_x, n_y)`` at reference arc lengths ``s`` -> (6, len(s))."""
        s = np.atleast_1d(np.asarray(s, float))
        first = self.sol.sol(np.clip(s / self.s_c, 0.0, 1.0))[:6]
        second = self.sol.sol(np.clip((s - self.s_c) / (self.length - self.s_c), 0.0, 1.0))[6:]
        return np.where(s <= self.s_c, first, second)

    def positions(self, s) -> np.ndarray:
        return self.state(s)[:2].T


def _rod_field(rope: RopeStatics, s_c: float):
    kappa0 = rope.rest_bend_total / rope.length
    ei, ea = rope.bending_rigidity, rope.axial_rigidity

    def segment(y, scale):
        c, s = np.cos(y[2]), np.sin(y[2])
        stretch = 1.0 + (y[4] * c + y[5] * s) / ea
        zero = np.zeros_like(c)
        return scale * np.stack([stretch * c, stretch * s, kappa0 + y[3] / ei, -stretch * (c * y[5] - s * y[4]),
                                 zero, zero])

    return lambda t, y, p: np.concatenate([segment(y[:6], s_c), segment(y[6:], rope.length - s_c)])


def solve_rod(rope: RopeStatics, s_c: float, guess: RodSolution | None = None, clamps=None, *, depth=None,
              direction=None, origin=None, tol: float = 1e-9) -> RodSolution:
    """Equilibrium of the elastica (module notes). Without ``depth``: zero load. With ``depth``: the point
    ``s_c`` pushed by ``depth`` along ``direction`` from ``origin`` (its unloaded position). ``clamps``: end
    tangent angles (``None``: pinned). ``guess``: a previous solution (else a circular arc)."""
    a, b = rope.ends()
    u = np.zeros(2) if direction is None else np.asarray(direction, float)

    def bc(ya, yb, p):
        first, last, left, right = ya[:6], yb[6:], yb[:6], ya[6:]
        ends = [first[3], last[3]] if clamps is None else [first[2] - clamps[0], last[2] - clamps[1]]
        load = p[0] if depth is None else (left[:2] - origin) @ u - depth
        return np.array([first[0] - a[0], first[1] - a[1], ends[0], last[0] - b[0], last[1] - b[1], ends[1],
                         *(left[:4] - right[:4]), *(right[4:] - left[4:] + p[0] * u), load])

    t = np.linspace(0.0, 1.0, 41) if guess is None else guess.sol.x
    y0, p0 = (_arc_state(rope, s_c, t), [0.0]) if guess is None else (guess.sol.sol(t), [guess.force])
    sol = solve_bvp(_rod_field(rope, s_c), bc, t, y0, p=p0, tol=tol, bc_tol=tol * 1e-3, max_nodes=20000)
    if not sol.success:
        raise RuntimeError(f"elastica BVP failed: {sol.message}")
    return RodSolution(sol, s_c, float(sol.p[0]), rope.length)


def _arc_state(rope: RopeStatics, s_c: float, t) -> np.ndarray:
    """Circular-arc starting guess on both segments (no force, no moment)."""
    chain = Chain(rope, 200)
    nodes = chain.nodes(chain.arc_guess())
    s_nodes = np.linspace(0.0, rope.length, nodes.shape[0])
    tangent = np.gradient(nodes, s_nodes, axis=0)
    theta = np.unwrap(np.arctan2(tangent[:, 1], tangent[:, 0]))

    def on(s):
        return np.stack([np.interp(s, s_nodes, nodes[:, 0]), np.interp(s, s_nodes, nodes[:, 1]),
                         np.interp(s, s_nodes, theta), *np.zeros((3, s.size))])

    return np.concatenate([on(t * s_c), on(s_c + t * (rope.length - s_c))])


def rod_installed(rope: RopeStatics, s_c: float, clamped: bool = True) -> tuple[RodSolution, tuple | None]:
    """The unloaded rod and the clamp angles of an unstressed installation (end tangents of the pinned
    equilibrium; ``None`` if pinned). The clamped rod's unloaded shape is the pinned one."""
    pinned = solve_rod(rope, s_c)
    if not clamped:
        return pinned, None
    theta = pinned.state([0.0, rope.length])[2]
    return solve_rod(rope, s_c, pinned, tuple(theta)), tuple(theta)


def rod_direction(rod: RodSolution) -> np.ndarray:
    """Approach direction at the contact point: the unloaded rod's normal pointing away from the ring centre."""
    x, y, theta = rod.state([rod.s_c])[:3, 0]
    return outward_normal(np.array([np.cos(theta), np.sin(theta)]), np.array([x, y]))


def chain_direction(x, node: int) -> np.ndarray:
    """The same at node ``node`` (0-based) of a chain: normal to the chord of its two neighbours."""
    return outward_normal(x[node + 1] - x[node - 1], x[node])


def rod_pressing_curve(rope: RopeStatics, unloaded: RodSolution, clamps, depths, direction) -> np.ndarray:
    """Forces [N] at the displacement-controlled ``depths`` (continuation from the unloaded rod)."""
    origin = unloaded.positions([unloaded.s_c])[0]
    forces, current = [], unloaded
    for depth in depths:
        current = solve_rod(rope, unloaded.s_c, current, clamps, depth=depth, direction=direction, origin=origin)
        forces.append(current.force)
    return np.array(forces)


# ---------------------------------------------------------------------------------------------- diffspace side
PAPER = RopeStatics(length=0.30, bending_rigidity=1.5532 * 0.01, axial_rigidity=5.0e4,
                    rest_bend_total=-np.deg2rad(26.0), ring_radius=0.15, end_distance=0.26)
"""The rope of configs/snare_capture.toml: ``EI = k_tor l`` with k_tor = 1.5532 N m/rad and l = 0.01 m."""


def diffspace_statics(config, nodes, depths, overrides=()) -> dict:
    """What diffspace computes for the comparison, through its public API (imported here so that the models
    above share nothing with it): the installed shape (N+1, 2), the fitting headings [rad], and per 1-based
    node the approach direction (2,) and the pressing forces at ``depths``."""
    import equinox as eqx
    import jax
    import jax.numpy as jnp

    from diffspace.bodies import contact_direction, initial_shape, pressing_curve
    from diffspace.scenarios import load_scenario

    scenario = load_scenario(config, ["strike.mass_source='value'", "strike.mass_kg=1.79", *overrides])

    @eqx.filter_jit
    def statics(scenario, nodes, depths):
        model = scenario.model_of(scenario.params)
        x, ok = initial_shape(model)
        forces, ok_f = jax.vmap(lambda n: pressing_curve(model, x, n - 1, depths))(nodes)
        directions = jax.vmap(lambda n: contact_direction(x, n - 1, model.approach))(nodes)
        return x, model.rings.attachments(0.0), directions, forces, ok & jnp.all(ok_f)

    x, attach, directions, forces, ok = statics(scenario, jnp.asarray(nodes), jnp.asarray(depths, float))
    if not bool(ok):
        raise RuntimeError("diffspace's static solves did not converge")
    attach = np.asarray(attach)
    return {"shape": np.asarray(x)[:, :2], "clamp_headings": np.arctan2(attach[:, 1], attach[:, 0]),
            "directions": np.asarray(directions)[:, :2], "forces": np.asarray(forces),
            "end_condition": scenario.rope.end_condition, "n_sections": scenario.rope.n_sections}
