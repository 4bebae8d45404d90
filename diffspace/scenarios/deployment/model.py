r"""The replaceable-interface mast as a constrained mechanical system (paper Sections 2.4-2.7, Eqs. (39)-(46)).

**Bodies.** ``n`` cube modules of edge ``a`` in natural coordinates (:mod:`diffspace.bodies.natural`, body
point = cube centre) joined by ``n - 1`` interfaces of length ``L``. In the reference configuration (drive
angle ``theta_0``, here described for ``theta_0 = 0``) the mast lies along world ``x``: module ``k`` is centred
at ``k (a + L) e_x`` with axes along the world axes, and interface ``k`` runs from the ``+x`` face of module
``k`` to the ``-x`` face of module ``k + 1``. Interfaces are either

* **shells** (:mod:`diffspace.bodies.shell`): a cylinder of mid-surface radius ``R = (d_i + t) / 2`` meshed
  ``n_circ x n_axial``. Each end ring is **clamped** to its module (Eq. (40), Fig. 4a): the ring nodes'
  positions and circumferential gradients move with the module, ``r = p + R_k X``, ``r_x = R_k t`` (linear in
  the natural coordinates, so these coordinates are eliminated: ``q_shell = T y`` with a constant ``T``), and
  the wall's slope is held, ``n . r_y = 0`` with the module-fixed ring normal ``n = R_k n_bar`` (one
  constraint per ring node). ``r_y``'s in-plane components stay free: a wall glued to a rigid face keeps
  its edge in place and its normal rotation, not its axial strain. (Clamping all of ``r_y`` would force zero
  axial strain at the face and overstiffen the tube in bending by ~12 % for two axial elements.)
* **beams** (:mod:`diffspace.bodies.beam`): a Timoshenko tube between the two face centres; the tube's mass
  goes to the two faces as thin rings.

**Drive** (Eq. (41), Fig. 4b): module 0 turns about the world ``z`` axis through its centre, driven by the
angle ``theta(t)`` (rheonomic). The six joint rows are written in the co-rotating frame ``a = (cos theta,
sin theta, 0)``, ``b = (-sin theta, cos theta, 0)``: ``a.p_0 = b.p_0 = e_z.p_0 = 0`` (the joint point),
``a.w_0 = b.w_0 = 0`` (axis), ``b.u_0 = 0`` (angle). Their multipliers are the joint reactions: the rover
exerts the force ``F = -(lambda_1 a + lambda_2 b + lambda_3 e_z)`` and the drive torque ``tau = -lambda_6``
about ``z`` on module 0 (the generalised constraint force on ``u_0`` is ``-lambda_6 b``, whose moment is
``u_0 x (-lambda_6 b) = -lambda_6 e_z``). With the six orthonormality rows of every module (Eq. (39)) and the
slope rows, the equations of motion are Eq. (45), ``M y'' + Phi_y^T lambda = Q``, with the constant mass
matrix ``M = T^T M_shell T + diag(M_module)`` and ``Q = -T^T F_shell(T y, T y')`` (no gravity, paper
assumption 3).
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ...actuation.drive import Drive
from ...bodies import natural
from ...bodies.beam import BeamInterface, TubeSection
from ...bodies.natural import MassProperties
from ...bodies.shell import Shell, ShellMaterial, cylinder_mesh, ring_nodes
from ...integrate.constrained import AbstractConstrainedSystem
from .shell_forces import ShellPoints
from ..declare import declared

# interface frame (columns: world images of the cylinder's local x, y, z): the tube axis (local z) is world x
_INTERFACE_AXES = np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
N_DRIVE_ROWS = 6


def _rot_z(angle) -> Float[Array, "3 3"]:
    c, s = jnp.cos(angle), jnp.sin(angle)
    zero, one = jnp.zeros_like(c), jnp.ones_like(c)
    return jnp.stack([jnp.stack([c, -s, zero]), jnp.stack([s, c, zero]), jnp.stack([zero, zero, one])])


def _rotate(axes, local):
    """World components ``R X`` of body-frame vectors ``local[..., 3]`` for the axes ``R = [u v w]``
    (``axes[..., 3, 3]``, broadcasting), as three scaled columns: no matrix kernel for 3-vectors."""
    return local[..., 0:1] * axes[..., 0] + local[..., 1:2] * axes[..., 1] + local[..., 2:3] * axes[..., 2]


class DriveRotation(eqx.Module):
    """``R_z(theta(t) - theta(0))``: the rigid rotation of the mast since the start (co-rotation)."""

    drive: Drive

    def __call__(self, t) -> Float[Array, "3 3"]:
        return _rot_z(self.drive.angle(t) - self.drive.angle(0.0))


class MastParams(eqx.Module):
    """Physical parameters (SI; arrays, so they can be design variables), each declared with its config key."""

    thickness: Float[Array, ""] = declared("interface.thickness_m", 0.002, gt=0.0, design=(5e-4, 4e-3))
    inner_diameter: Float[Array, ""] = declared("interface.inner_diameter_m", 0.084, gt=0.0, design=(0.05, 0.12))
    length: Float[Array, ""] = declared("interface.length_m", 0.105, gt=0.0, design=(0.05, 0.2))  # interface L
    young: Float[Array, ""] = declared("interface.young_Pa", 2.4e9, gt=0.0, design=(1e8, 1e13), log=True)
    damping: Float[Array, ""] = declared("interface.damping_s", 2.5e-3, min=0.0, design=(1e-5, 2e-2), log=True,
                                         help="Kelvin-Voigt beta: zeta = beta omega / 2")
    module_density: Float[Array, ""] = declared("mast.module_density_kg_m3", 7850.0, gt=0.0, design=(500.0, 2e4),
                                                log=True, help="solid cube modules")
    edge: Float[Array, ""] = declared("mast.module_edge_m", 0.2, gt=0.0)  # module edge a
    poisson: Float[Array, ""] = declared("interface.poisson", 0.35, min=0.0, max=0.49)
    density: Float[Array, ""] = declared("interface.density_kg_m3", 1100.0, gt=0.0)


class Mast(AbstractConstrainedSystem):
    """The mast as a constrained system: rigid modules joined by flexible interfaces. Coordinates ``y = [modules (12 each), shell coordinates]``."""

    params: MastParams
    drive: Drive
    modules: MassProperties  # stacked over modules
    mass: Float[Array, "n n"]
    local: Float[Array, "f l"] | None  # T_loc: one interface's full shell coordinates from its own part of y
    rings: Float[Array, "4 2 c 3"] | None  # body-frame ring data: points, tangents, normals, axial (ring, node)
    shell: Shell | None
    points: ShellPoints | None  # the shells at their Gauss points (closed-form forces)
    beam: BeamInterface | None
    n_modules: int = eqx.field(static=True)
    n_circ: int = eqx.field(static=True, default=0)
    n_axial: int = eqx.field(static=True, default=0)

    @property
    def n_interfaces(self) -> int:
        return self.n_modules - 1

    @property
    def n_free_shell(self) -> int:
        """Shell coordinates per interface: ``r_y`` of the ``2 n_circ`` ring nodes, all 9 of the others."""
        return 0 if self.shell is None else 6 * self.n_circ + 9 * (self.n_axial - 1) * self.n_circ

    @property
    def n_coordinates(self) -> int:
        return 12 * self.n_modules + self.n_interfaces * self.n_free_shell

    def interface_indices(self) -> np.ndarray:
        """``(i, l)`` indices into ``y`` of what interface ``i``'s shell coordinates depend on: the 24
        coordinates of its two modules and its own ``n_free_shell``. On them every interface's map is the
        same ``T_loc`` (the rings' body-frame data is shared), so ``T`` is ``T_loc`` placed ``i`` times."""
        i = np.arange(self.n_interfaces)[:, None]
        free = 12 * self.n_modules + self.n_free_shell * i + np.arange(self.n_free_shell)
        return np.concatenate([12 * i + np.arange(24), free], axis=1)

    def assemble(self, blocks: Float[Array, "i f f"]) -> Float[Array, "n n"]:
        """``T^T blockdiag(B_i) T = sum_i P_i^T T_loc^T B_i T_loc P_i`` for shell matrices ``B_i`` over each
        interface's full shell coordinates (``P_i``: the selection :meth:`interface_indices`)."""
        local = jnp.einsum("am,iab,bn->imn", self.local, blocks, self.local)
        idx = self.interface_indices()
        n = self.n_coordinates
        return jnp.zeros((n, n)).at[idx[:, :, None], idx[:, None, :]].add(local)

    def module_coordinates(self, y: Float[Array, " n"]) -> Float[Array, "k 12"]:
        return y[: 12 * self.n_modules].reshape(self.n_modules, 12)

    def _pairs(self, y) -> Float[Array, "i 2 12"]:
        """The two modules of every interface (``[k, k + 1]``)."""
        modules = self.module_coordinates(y)
        return jnp.stack([modules[:-1], modules[1:]], axis=1)

    def shell_coordinates(self, y: Float[Array, " n"]) -> Float[Array, "i N 3 3"]:
        """Full ANCF coordinates of every interface (linear in ``y``; module docstring)."""
        free = y[12 * self.n_modules:].reshape(self.n_interfaces, -1)
        n_ring = 3 * self.n_circ
        r_y = free[:, :2 * n_ring].reshape(self.n_interfaces, 2, self.n_circ, 3)

        def ring(body, points, tangents, gradients):
            rot = natural.axes(body)
            return jnp.stack([body[:3] + _rotate(rot, points), _rotate(rot, tangents), gradients], axis=1)

        per_end = jax.vmap(ring, (0, 0, 0, 0))
        rings = jax.vmap(per_end, (0, None, None, 0))(self._pairs(y), self.rings[0], self.rings[1], r_y)
        inner = free[:, 2 * n_ring:].reshape(self.n_interfaces, -1, 3, 3)
        return jnp.concatenate([rings[:, 0], inner, rings[:, 1]], axis=1)

    # ------------------------------------------------------------------ AbstractConstrainedSystem
    def mass_matrix(self, q):
        return self.mass

    def rates(self, q, w):
        return w

    def retract(self, q, dw):
        return q + dw

    def forces(self, t, q, w):
        """``Q = -dU/dy - dD/dy'`` (elastic and Kelvin-Voigt forces of the interfaces). Shells: ``Q = -T^T
        F_shell(T y, T y')``, the element forces in closed form (:class:`.shell_forces.ShellPoints`) at the
        element coordinates gathered through :meth:`shell_coordinates` (a few products per shell coordinate);
        ``T^T`` and the assembly are that map's transpose (scatter-adds)."""
        if self.shell is not None:
            elements = lambda y: self.points.gather(self.shell_coordinates(y))  # noqa: E731
            e, transpose = jax.vjp(elements, q)
            return -transpose(self.points.forces(e, elements(w)))[0]
        # beams: F = J^T K (x + beta x_dot), x the deformations (one linearisation gives x_dot and J^T)
        deformation, linear = jax.linearize(lambda y: jax.vmap(self.beam.deformation)(*self.face_frames(y)), q)
        stress = (deformation + self.beam.damping * linear(w)) @ self.beam.stiffness()
        (force,) = jax.linear_transpose(linear, q)(stress)
        return -force

    def constraints(self, t, q):
        modules = self.module_coordinates(q)
        theta = self.drive.angle(t)
        a = jnp.stack([jnp.cos(theta), jnp.sin(theta), 0.0])
        b = jnp.stack([-jnp.sin(theta), jnp.cos(theta), 0.0])
        p0, u0, w0 = modules[0, :3], modules[0, 3:6], modules[0, 9:12]
        drive = jnp.stack([a @ p0, b @ p0, p0[2], a @ w0, b @ w0, b @ u0])
        rows = [drive, jax.vmap(natural.orthonormality)(modules).reshape(-1)]
        if self.shell is not None:
            rows.append(self.slopes(q).reshape(-1))
        return jnp.concatenate(rows)

    # ------------------------------------------------------------------ mast quantities
    def slopes(self, y) -> Float[Array, "i 2 c"]:
        """``n . r_y`` at every ring node (zero when the wall is clamped)."""
        free = y[12 * self.n_modules:].reshape(self.n_interfaces, -1)
        r_y = free[:, :6 * self.n_circ].reshape(self.n_interfaces, 2, self.n_circ, 3)
        normals = _rotate(jax.vmap(jax.vmap(natural.axes))(self._pairs(y))[:, :, None], self.rings[2])
        return normals[..., 0] * r_y[..., 0] + normals[..., 1] * r_y[..., 1] + normals[..., 2] * r_y[..., 2]

    def face_frames(self, y):
        """Axes (beam axis third) and origins of the two faces of every interface, each ``(i, ...)``."""
        pairs = self._pairs(y)
        axes = jax.vmap(jax.vmap(natural.axes))(pairs) @ jnp.asarray(_INTERFACE_AXES)
        offset = 0.5 * self.params.edge * jnp.array([[1.0, 0.0, 0.0], [-1.0, 0.0, 0.0]])
        origins = pairs[:, :, :3] + jnp.einsum("ieab,eb->iea", jax.vmap(jax.vmap(natural.axes))(pairs), offset)
        return axes[:, 0], origins[:, 0], axes[:, 1], origins[:, 1]

    def strain_energy(self, y) -> Float[Array, ""]:
        """Elastic energy of all interfaces [J]."""
        if self.shell is not None:
            return jnp.sum(jax.vmap(self.shell.energy)(self.shell_coordinates(y)))
        return jnp.sum(jax.vmap(self.beam.energy)(*self.face_frames(y)))

    def dissipation(self, y, y_dot) -> Float[Array, ""]:
        """Dissipation function of all interfaces (power loss ``2 D``) [W/2]."""
        if self.shell is not None:
            rates = self.shell_coordinates(y_dot)
            return jnp.sum(jax.vmap(self.shell.dissipation)(self.shell_coordinates(y), rates))
        frames, rates = jax.jvp(self.face_frames, (y,), (y_dot,))
        return jnp.sum(jax.vmap(self.beam.dissipation)(frames, rates))

    def reference_stiffness(self, y0) -> Float[Array, "n n"]:
        """``K_0 = d^2 U / dy^2`` at the unstressed reference ``y0``. Shells: ``T^T blockdiag(K_shell) T`` with
        the element Hessians of :meth:`Shell.stiffness` (every interface's reference is the first one
        translated, so one shell stiffness serves all; :meth:`assemble`). Beams: ``sum J_i^T K_tip J_i`` with
        ``J_i`` the Jacobian of interface ``i``'s deformation (exact at zero deformation)."""
        if self.shell is not None:
            k = self.shell.stiffness(self.shell_coordinates(y0)[0])
            return self.assemble(jnp.broadcast_to(k, (self.n_interfaces, *k.shape)))
        jac = jax.jacfwd(lambda y: jax.vmap(self.beam.deformation)(*self.face_frames(y)))(y0)  # (i, 6, n)
        return jnp.einsum("iam,ab,ibn->mn", jac, self.beam.stiffness(), jac)

    def tangent(self, t, y, y_dot, lam) -> tuple[Float[Array, "n n"], Float[Array, "n n"]]:
        """``(K, C)`` at a deformed state: ``K = -dQ/dy + d(G^T lambda)/dy``, ``C = -dQ/dy'``. Shells:
        ``T^T K_i T`` over the interfaces with the element tangents of the closed-form forces at each
        shell's own deformation (:meth:`.shell_forces.ShellPoints.tangent`, :meth:`assemble`); beams:
        forward-mode Jacobians of the forces. The constraints' part ``sum lambda_k d^2 g_k / dy^2`` (the
        modules' orthonormality rows and the slopes carry the inertia loads of a fast drive) by forward over
        reverse mode."""
        if self.shell is not None:
            elements = lambda yy: self.points.gather(self.shell_coordinates(yy))  # noqa: E731
            per_shell = jax.vmap(self.shell.assemble)
            stiffness, damping = (self.assemble(per_shell(b.reshape(self.n_interfaces, -1, 36, 36)))
                                  for b in self.points.tangent(elements(y), elements(y_dot)))
        else:
            stiffness = -jax.jacfwd(lambda yy: self.forces(t, yy, y_dot))(y)
            damping = -jax.jacfwd(lambda ww: self.forces(t, y, ww))(y_dot)
        geometric = jax.hessian(lambda yy: lam @ self.constraints(t, yy))(y)
        return stiffness + geometric, damping

    def kinetic_energy(self, y_dot) -> Float[Array, ""]:
        return 0.5 * y_dot @ self.mass @ y_dot

    def joint_reactions(self, t, lam) -> tuple[Float[Array, "3"], Float[Array, ""]]:
        """World force the rover exerts on module 0 at the joint and the drive torque about ``z`` (module
        docstring)."""
        theta = self.drive.angle(t)
        a = jnp.stack([jnp.cos(theta), jnp.sin(theta), 0.0])
        b = jnp.stack([-jnp.sin(theta), jnp.cos(theta), 0.0])
        force = -(lam[0] * a + lam[1] * b + lam[2] * jnp.array([0.0, 0.0, 1.0]))
        return force, -lam[5]

    def end_angular(self, y, y_dot, y_ddot) -> tuple[Float[Array, ""], Float[Array, ""]]:
        """``z`` angular velocity and acceleration of the last module [rad/s, rad/s^2]."""
        end = slice(12 * (self.n_modules - 1), 12 * self.n_modules)
        return (natural.angular_velocity(y[end], y_dot[end])[2], natural.angular_acceleration(y[end], y_ddot[end])[2])

    def drift(self, t, y) -> Float[Array, ""]:
        """Largest constraint violation as a length [m]: length rows as they are, dimensionless rows (axes,
        slopes) times the module half-diagonal (the largest distance they move a body point by)."""
        g = jnp.abs(self.constraints(t, y))
        lengths = jnp.max(g[:3])
        return jnp.maximum(lengths, jnp.max(g[3:]) * self.params.edge * np.sqrt(3.0) / 2.0)


# ---------------------------------------------------------------------------------------------- building
def module_centres(params: MastParams, n_modules: int) -> Float[Array, "k 3"]:
    """Centres of the modules in the reference configuration (``theta = 0``)."""
    pitch = params.edge + params.length
    return jnp.arange(n_modules)[:, None] * pitch * jnp.array([1.0, 0.0, 0.0])


def _ring_data(params: MastParams, mesh, n_circ: int, n_axial: int) -> Float[Array, "4 2 c 3"]:
    """Body-frame data of the two end rings (positions, tangents, outward normals, axial directions)."""
    axes = jnp.asarray(_INTERFACE_AXES)
    out = []
    for end, offset in ((0, 0.5 * params.edge), (1, 0.5 * params.edge - params.edge - params.length)):
        nodes = mesh.reference[ring_nodes(n_circ, n_axial, end)]
        points = nodes[:, 0] @ axes.T + offset * jnp.array([1.0, 0.0, 0.0])
        normal_local = nodes[:, 0] * jnp.array([1.0, 1.0, 0.0])
        normals = (normal_local / jnp.linalg.norm(normal_local, axis=1, keepdims=True)) @ axes.T
        out.append(jnp.stack([points, nodes[:, 1] @ axes.T, normals, nodes[:, 2] @ axes.T]))
    return jnp.stack(out, axis=1)


def build_mast(params: MastParams, drive: Drive, n_modules: int, model: str, n_circ: int = 8, n_axial: int = 2,
               n_gauss: int = 3) -> Mast:
    """Assemble the mast (constant mass matrix and shell map ``T_loc`` included). ``model``: "shell" or "beam"."""
    cube = MassProperties.cube(params.edge, params.module_density)
    if model == "beam":
        section = TubeSection(params.young, params.poisson, params.density, params.inner_diameter,
                              params.thickness)
        tube_mass = section.density * section.area * params.length
        half = 0.5 * params.edge * jnp.array([1.0, 0.0, 0.0])
        ring = lambda side: MassProperties.ring(0.5 * tube_mass, section.mid_radius, side * half,  # noqa: E731
                                                jnp.array([1.0, 0.0, 0.0]))
        parts = [_module_with_rings(cube, ring, k, n_modules) for k in range(n_modules)]
        modules = jax.tree.map(lambda *x: jnp.stack(x), *parts)
        mass = jax.scipy.linalg.block_diag(*[p.mass_matrix() for p in parts])
        beam = BeamInterface(section, params.length, params.damping)
        return Mast(params, drive, modules, mass, None, None, None, None, beam, n_modules)
    radius = 0.5 * (params.inner_diameter + params.thickness)
    mesh = cylinder_mesh(radius, params.length, n_circ, n_axial, n_gauss)
    shell = Shell(mesh, ShellMaterial(params.young, params.poisson, params.density, params.thickness,
                                      params.damping))
    modules = jax.tree.map(lambda *x: jnp.stack(x), *([cube] * n_modules))
    skeleton = Mast(params, drive, modules, jnp.zeros((0, 0)), None, _ring_data(params, mesh, n_circ, n_axial),
                    shell, ShellPoints.of(shell, n_modules - 1), None, n_modules, n_circ, n_axial)
    first = jax.jacfwd(lambda y: skeleton.shell_coordinates(y)[0].reshape(-1))(jnp.zeros(skeleton.n_coordinates))
    skeleton = eqx.tree_at(lambda m: m.local, skeleton, first[:, skeleton.interface_indices()[0]],
                           is_leaf=lambda x: x is None)
    shell_mass = jnp.kron(shell.mass_matrix(), jnp.eye(3))
    blocks = jax.scipy.linalg.block_diag(*([cube.mass_matrix()] * n_modules))
    n_mod = 12 * n_modules
    mass = skeleton.assemble(jnp.broadcast_to(shell_mass, (n_modules - 1, *shell_mass.shape)))
    return eqx.tree_at(lambda m: m.mass, skeleton, mass.at[:n_mod, :n_mod].add(blocks))


def _module_with_rings(cube: MassProperties, ring, k: int, n_modules: int) -> MassProperties:
    """Module ``k`` with half of each adjacent tube's mass as a ring on the face it is attached to."""
    total = cube
    if k < n_modules - 1:
        total = total + ring(1.0)
    if k > 0:
        total = total + ring(-1.0)
    return total


def reference_coordinates(mast: Mast) -> Float[Array, " n"]:
    """``y`` of the undeformed mast at the drive's start angle (modules at rest, shells at their reference)."""
    rot = _rot_z(mast.drive.angle(0.0))
    centres = module_centres(mast.params, mast.n_modules) @ rot.T
    modules = jax.vmap(natural.coordinates, (None, 0))(rot, centres).reshape(-1)
    if mast.shell is None:
        return modules
    axes = rot @ jnp.asarray(_INTERFACE_AXES)
    pieces = [modules]
    n_ring = mast.n_circ
    for i in range(mast.n_interfaces):
        origin = centres[i] + rot @ (0.5 * mast.params.edge * jnp.array([1.0, 0.0, 0.0]))
        local = mast.shell.mesh.reference
        world = jnp.stack([local[:, 0] @ axes.T + origin, local[:, 1] @ axes.T, local[:, 2] @ axes.T], axis=1)
        pieces += [world[:n_ring, 2].reshape(-1), world[-n_ring:, 2].reshape(-1),
                   world[n_ring:-n_ring].reshape(-1)]
    return jnp.concatenate(pieces)


__all__ = ["DriveRotation", "Mast", "MastParams", "N_DRIVE_ROWS", "build_mast", "module_centres",
           "reference_coordinates"]
