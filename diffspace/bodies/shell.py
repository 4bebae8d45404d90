r"""Gradient-deficient ANCF thin-shell element (Dmitrochenko & Pogorelov 2003; cylindrical use as in Liu, Tian &
Hu 2012; the mast paper's Section 2.1-2.3, Eqs. (8)-(38)).

**Coordinates.** Every node carries its position and the two mid-surface gradients (Eqs. (8)-(10))

.. math:: e_i = [r_i,\ r_{i,x},\ r_{i,y}] \in \mathbb R^{3\times3},

stored as an array ``q[node, slot, xyz]`` (slot 0: ``r``, 1: ``r_x``, 2: ``r_y``; flat index
``9 node + 3 slot + xyz``). ``x`` and ``y`` are the element's curvilinear parameters (arc length along the
two mesh directions in the reference configuration); an element is the parameter rectangle
``[0, a] x [0, b]`` with corner nodes A (0, 0), B (a, 0), C (a, b), D (0, b).

**Shape functions** (Eqs. (11)-(12)): ``r(x, y) = S(xi, eta) e`` with ``xi = x / a``, ``eta = y / b`` and
the incomplete bicubic basis ``{1, xi, eta, xi^2, xi eta, eta^2, xi^3, xi^2 eta, xi eta^2, eta^3,
xi^3 eta, xi eta^3}``; the 12 coefficients of each shape function follow from the 12 nodal conditions
(value, ``d/dx``, ``d/dy`` at the four corners), so ``S`` interpolates ``r``, ``r_x``, ``r_y`` at the nodes.

**Strains.** With ``g_x = r_x``, ``g_y = r_y`` and the unit normal ``n = g_x x g_y / |g_x x g_y|`` (Eq. (15)),
the mid-surface Green-Lagrange strain in the reference configuration's local Cartesian frame is Eq. (18),

.. math:: \varepsilon_{mid} = \tfrac12 T^T (G - G^0) T, \qquad G_{ij} = g_i\cdot g_j,

and the change of curvature (Kirchhoff-Love, Eqs. (24)-(25)) is ``kappa = T^T (l - l^0) T`` with
``l_ij = r_{,ij} . n``. ``T = J_0^{-1}`` (Eq. (16)) maps local Cartesian to curvilinear increments:
``J_0`` holds the components of ``g_x^0, g_y^0`` in the orthonormal tangent basis
``e_x = g_x^0 / |g_x^0|``, ``e_y = n^0 x e_x``. In Voigt form ``[e11, e22, 2 e12]``.

**Energy** (Eqs. (29)-(31), integrated over the thickness ``h``) by ``n_gauss x n_gauss`` Gauss quadrature:

.. math:: U = \int_{A_0} \tfrac h2\,\varepsilon^T D \varepsilon + \tfrac{h^3}{24}\,\kappa^T D \kappa\ dA_0,\qquad
          D = \tfrac{E}{1-\nu^2}\begin{bmatrix}1&\nu&0\\ \nu&1&0\\ 0&0&\tfrac{1-\nu}2\end{bmatrix},

``dA_0 = |g_x^0 x g_y^0| dx dy``. Elastic forces ``F = dU/de`` (Eqs. (32)-(35)) and the tangent stiffness
are ``jax.grad`` / ``jax.hessian`` of **one** element's energy, ``vmap``-ed over the elements and
scatter-added into the nodes.

**Mass** (Eqs. (26)-(28)): ``M_e = rho h \int S^T S dA_0``, constant; assembled as a scalar matrix over the
``(node, slot)`` pairs (the three Cartesian components share it: ``M = M_s (x) I_3``).

**Material damping** (optional, Kelvin-Voigt, i.e. stiffness-proportional Rayleigh damping ``C = beta K``
taken about the current configuration): the dissipation function

.. math:: \mathcal D = \beta \int_{A_0} \tfrac h2\,\dot\varepsilon^T D \dot\varepsilon
          + \tfrac{h^3}{24}\,\dot\kappa^T D \dot\kappa\ dA_0

gives the damping force ``F_d = d D / d e_dot`` (linear in ``e_dot``, zero for rigid motion) and the power
loss ``e_dot . F_d = 2 D``. A mode of frequency ``omega`` is damped with ``zeta = beta omega / 2``; a
mass-proportional term is left out because it would resist rigid motion.
"""

from __future__ import annotations

import functools
import math

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, ArrayLike, Float

_EXPONENTS = ((0, 0), (1, 0), (0, 1), (2, 0), (1, 1), (0, 2), (3, 0), (2, 1), (1, 2), (0, 3), (3, 1), (1, 3))
_DERIVATIVES = ((0, 0), (1, 0), (0, 1), (2, 0), (1, 1), (0, 2))  # r, r_xi, r_eta, r_xixi, r_xieta, r_etaeta
_CORNERS = ((0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0))  # A, B, C, D


def _monomials(xi: float, eta: float, order: tuple[int, int]) -> np.ndarray:
    """``d^p/dxi^p d^q/deta^q`` of the 12 basis monomials at ``(xi, eta)``."""
    p, q = order
    return np.array([math.perm(i, p) * math.perm(j, q) * xi ** max(i - p, 0) * eta ** max(j - q, 0)
                     if i >= p and j >= q else 0.0 for i, j in _EXPONENTS])


@functools.cache
def _coefficients() -> np.ndarray:
    """``C`` with ``S(xi, eta) = P(xi, eta) C`` on the unit square (DOFs value, d/dxi, d/deta per corner)."""
    conditions = np.array([_monomials(*corner, order) for corner in _CORNERS for order in _DERIVATIVES[:3]])
    return np.linalg.inv(conditions)


@functools.cache
def shape_table(n_gauss: int) -> tuple[np.ndarray, np.ndarray]:
    """Gauss weights ``(G,)`` on the unit square and the unit-square shape functions and their derivatives
    at the Gauss points, ``(G, 6, 12)`` (derivative order as ``r, r_xi, r_eta, r_xixi, r_xieta, r_etaeta``)."""
    x, w = np.polynomial.legendre.leggauss(n_gauss)
    x, w = 0.5 * (x + 1.0), 0.5 * w
    points = [(xi, eta) for xi in x for eta in x]
    weights = np.array([wi * wj for wi in w for wj in w])
    table = np.array([[_monomials(xi, eta, d) @ _coefficients() for d in _DERIVATIVES] for xi, eta in points])
    return weights, table


def shape_functions(xi, eta, size: Float[ArrayLike, "2"]) -> Float[Array, "6 12"]:
    """Physical shape functions and their ``x``/``y`` derivatives at one point of an ``a x b`` element:
    rows ``S, S_x, S_y, S_xx, S_xy, S_yy``, columns the 12 nodal DOFs (per corner ``r, r_x, r_y``)."""
    a, b = jnp.asarray(size, float)
    unit = jnp.asarray(np.array([_monomials(float(xi), float(eta), d) @ _coefficients() for d in _DERIVATIVES]))
    return _physical(unit, a, b)


def _physical(unit: Float[Array, "... 6 12"], a, b) -> Float[Array, "... 6 12"]:
    """Unit-square shape functions -> physical ones (gradient DOFs scale by ``a``/``b``, derivatives by 1/...)."""
    dof_scale = jnp.tile(jnp.stack([jnp.ones_like(a), a, b]), 4)
    derivative_scale = jnp.stack([jnp.ones_like(a), 1.0 / a, 1.0 / b, 1.0 / a**2, 1.0 / (a * b), 1.0 / b**2])
    return unit * dof_scale * derivative_scale[:, None]


class ShellMaterial(eqx.Module):
    """Isotropic linear-elastic shell material: Young's modulus [Pa], Poisson's ratio, density [kg/m^3],
    thickness ``h`` [m] and the Kelvin-Voigt (stiffness-proportional Rayleigh) coefficient ``damping`` [s]."""

    young: Float[Array, ""]
    poisson: Float[Array, ""]
    density: Float[Array, ""]
    thickness: Float[Array, ""]
    damping: Float[Array, ""]

    def __init__(self, young, poisson, density, thickness, damping=0.0):
        self.young = jnp.asarray(young, float)
        self.poisson = jnp.asarray(poisson, float)
        self.density = jnp.asarray(density, float)
        self.thickness = jnp.asarray(thickness, float)
        self.damping = jnp.asarray(damping, float)

    def plane_stress(self) -> Float[Array, "3 3"]:
        """``D`` of the module docstring (Voigt, engineering shear strain)."""
        nu = self.poisson
        return self.young / (1.0 - nu**2) * jnp.array([[1.0, nu, 0.0], [nu, 1.0, 0.0], [0.0, 0.0, 0.5 * (1.0 - nu)]])


class ShellMesh(eqx.Module):
    """Reference configuration ``reference[node, slot, xyz]``, element sizes ``size[e] = (a, b)`` and the
    static connectivity ``elements[e] = (A, B, C, D)``; ``n_gauss`` Gauss points per direction."""

    reference: Float[Array, "N 3 3"]
    size: Float[Array, "E 2"]
    elements: tuple[tuple[int, int, int, int], ...] = eqx.field(static=True)
    n_gauss: int = eqx.field(static=True, default=4)

    @property
    def n_nodes(self) -> int:
        return self.reference.shape[0]

    @property
    def connectivity(self) -> np.ndarray:
        return np.asarray(self.elements, dtype=np.int32)

    def element_dofs(self) -> np.ndarray:
        """Flat DOF indices ``(E, 36)`` of every element (``9 node + 3 slot + xyz``, corner order A-D)."""
        return (9 * self.connectivity[:, :, None] + np.arange(9)).reshape(-1, 36)

    def gather(self, q: Float[Array, "N 3 3"]) -> Float[Array, "E 12 3"]:
        """Element coordinates ``e`` (corners A-D, each ``r, r_x, r_y``)."""
        return q[self.connectivity].reshape(-1, 12, 3)

    def scatter(self, per_element: Float[Array, "E 12 3"]) -> Float[Array, "N 3 3"]:
        """Sum element vectors into the nodes (the transpose of :meth:`gather`)."""
        return jnp.zeros((self.n_nodes, 3, 3)).at[self.connectivity].add(per_element.reshape(-1, 4, 3, 3))


def _geometry(d: Float[Array, "G 6 3"]):
    """Metric ``G`` (G, 2, 2), second fundamental form ``l`` (G, 2, 2), unit normal and tangent-plane basis."""
    gx, gy = d[:, 1], d[:, 2]
    normal = jnp.cross(gx, gy)
    normal = normal / jnp.linalg.norm(normal, axis=-1, keepdims=True)
    g = jnp.stack([gx, gy], axis=-1)  # (G, 3, 2)
    metric = jnp.einsum("gci,gcj->gij", g, g)
    l11, l12, l22 = (jnp.sum(d[:, k] * normal, axis=-1) for k in (3, 4, 5))
    second = jnp.stack([jnp.stack([l11, l12], -1), jnp.stack([l12, l22], -1)], -2)
    return metric, second, normal, g


class ElementReference(eqx.Module):
    """What one element's strains need from the reference configuration, at its Gauss points: physical
    shape functions ``shapes`` (G, 6, 12) (rows ``S, S_x, S_y, S_xx, S_xy, S_yy``), metric and second
    fundamental form ``metric``/``second`` (G, 2, 2), ``transform`` ``T = J_0^{-1}`` (Eq. (16)) and the
    quadrature factor ``w_g |g_x^0 x g_y^0| a b`` (G,)."""

    shapes: Float[Array, "G 6 12"]
    metric: Float[Array, "G 2 2"]
    second: Float[Array, "G 2 2"]
    transform: Float[Array, "G 2 2"]
    factor: Float[Array, " G"]


def element_reference(e0: Float[Array, "12 3"], size: Float[Array, "2"], n_gauss: int = 4) -> ElementReference:
    """:class:`ElementReference` of one element with reference coordinates ``e0`` and size ``(a, b)``."""
    weights, table = shape_table(n_gauss)
    shapes = _physical(jnp.asarray(table), size[0], size[1])
    metric, second, n0, g0 = _geometry(jnp.einsum("gdk,kc->gdc", shapes, e0))
    ex = g0[:, :, 0] / jnp.linalg.norm(g0[:, :, 0], axis=-1, keepdims=True)
    ey = jnp.cross(n0, ex)
    j0 = jnp.einsum("gci,gcj->gij", jnp.stack([ex, ey], -1), g0)  # rows: e_x, e_y components of g_x0, g_y0
    det = j0[:, 0, 0] * j0[:, 1, 1] - j0[:, 0, 1] * j0[:, 1, 0]
    inv = jnp.stack([jnp.stack([j0[:, 1, 1], -j0[:, 0, 1]], -1), jnp.stack([-j0[:, 1, 0], j0[:, 0, 0]], -1)], -2)
    return ElementReference(shapes, metric, second, inv / det[:, None, None],
                            jnp.asarray(weights) * det * size[0] * size[1])


def _voigt(t: Float[Array, "G 2 2"]) -> Float[Array, "G 3"]:
    return jnp.stack([t[:, 0, 0], t[:, 1, 1], t[:, 0, 1] + t[:, 1, 0]], axis=-1)


def element_strains(e: Float[Array, "12 3"], ref: ElementReference):
    """Membrane strain and change of curvature ``(G, 3)`` each (Voigt, local Cartesian; module docstring)."""
    metric, second, _, _ = _geometry(jnp.einsum("gdk,kc->gdc", ref.shapes, e))
    transform = lambda m: jnp.einsum("gki,gkl,glj->gij", ref.transform, m, ref.transform)  # noqa: E731  T^T m T
    return _voigt(transform(0.5 * (metric - ref.metric))), _voigt(transform(second - ref.second))


def _quadratic(material: ShellMaterial, membrane, bending, factor) -> Float[Array, ""]:
    """``sum_g factor_g (h/2 m^T D m + h^3/24 k^T D k)``."""
    dmat, h = material.plane_stress(), material.thickness
    density = 0.5 * h * jnp.einsum("gi,ij,gj->g", membrane, dmat, membrane)
    density += h**3 / 24.0 * jnp.einsum("gi,ij,gj->g", bending, dmat, bending)
    return jnp.sum(factor * density)


def element_energy(e, ref: ElementReference, material: ShellMaterial) -> Float[Array, ""]:
    """Strain energy of one element (Eqs. (29)-(31))."""
    return _quadratic(material, *element_strains(e, ref), ref.factor)


def element_dissipation(e, e_dot, ref: ElementReference, material: ShellMaterial) -> Float[Array, ""]:
    """Dissipation function ``D`` of one element (module docstring; half the power loss)."""
    _, (membrane_dot, bending_dot) = jax.jvp(lambda x: element_strains(x, ref), (e,), (e_dot,))
    return material.damping * _quadratic(material, membrane_dot, bending_dot, ref.factor)


def element_force(e, e_dot, ref: ElementReference, material: ShellMaterial) -> Float[Array, "12 3"]:
    """Internal force of one element, elastic ``dU/de`` plus damping ``dD/de_dot``: with the strain map
    linearised at ``e`` (``B = d eps / de``), ``F = B^T [h D (eps + beta eps_dot); h^3/12 D (kappa + beta
    kappa_dot)]`` weighted by the quadrature factors (the Kelvin-Voigt stress; one linearisation serves the
    strain rates and the transpose)."""
    strains, linear = jax.linearize(lambda x: element_strains(x, ref), e)
    rates = linear(e_dot)
    dmat, h, beta = material.plane_stress(), material.thickness, material.damping
    scale = (h * ref.factor, h**3 / 12.0 * ref.factor)
    stress = tuple(w[:, None] * ((eps + beta * eps_dot) @ dmat) for w, eps, eps_dot in zip(scale, strains, rates))
    (force,) = jax.linear_transpose(linear, e)(stress)
    return force


def element_mass(ref: ElementReference, material: ShellMaterial) -> Float[Array, "12 12"]:
    """Scalar consistent mass ``rho h int S^T S dA_0`` of one element (Eq. (26))."""
    s = ref.shapes[:, 0]
    return material.density * material.thickness * jnp.einsum("g,gk,gl->kl", ref.factor, s, s)


class Shell(eqx.Module):
    """An ANCF thin shell: mesh (reference geometry, connectivity), material and the elements' reference data
    (computed once). Coordinates ``q`` and velocities ``q_dot`` are ``(N, 3, 3)`` arrays (module docstring)."""

    mesh: ShellMesh
    material: ShellMaterial
    references: ElementReference

    def __init__(self, mesh: ShellMesh, material: ShellMaterial):
        self.mesh = mesh
        self.material = material
        self.references = jax.vmap(element_reference, (0, 0, None))(mesh.gather(mesh.reference), mesh.size,
                                                                      mesh.n_gauss)

    def energy(self, q: Float[Array, "N 3 3"]) -> Float[Array, ""]:
        """Total strain energy ``U`` [J]."""
        return jnp.sum(jax.vmap(element_energy, (0, 0, None))(self.mesh.gather(q), self.references, self.material))

    def dissipation(self, q, q_dot) -> Float[Array, ""]:
        """Dissipation function ``D`` (power loss ``2 D``) [W / 2]."""
        values = jax.vmap(element_dissipation, (0, 0, 0, None))(self.mesh.gather(q), self.mesh.gather(q_dot),
                                                               self.references, self.material)
        return jnp.sum(values)

    def forces(self, q, q_dot=None) -> Float[Array, "N 3 3"]:
        """Internal (elastic + damping) nodal forces ``dU/dq + dD/dq_dot`` (move to the right-hand side with a
        minus sign)."""
        q_dot = jnp.zeros_like(q) if q_dot is None else q_dot
        per_element = jax.vmap(element_force, (0, 0, 0, None))(self.mesh.gather(q), self.mesh.gather(q_dot),
                                                              self.references, self.material)
        return self.mesh.scatter(per_element)

    def strains(self, q: Float[Array, "N 3 3"]) -> tuple[Float[Array, "E G 3"], Float[Array, "E G 3"]]:
        """Membrane strain and change of curvature at every element's Gauss points (Voigt ``[xx, yy, 2xy]`` in
        the local Cartesian frame: for :func:`cylinder_mesh`, ``x`` circumferential and ``y`` axial)."""
        return jax.vmap(element_strains)(self.mesh.gather(q), self.references)

    def peak_strains(self, q: Float[Array, "N 3 3"]) -> tuple[Float[Array, ""], Float[Array, ""]]:
        """``(largest principal strain magnitude at either face, largest axial compression of the
        mid-surface)``: the faces at ``+-h/2`` carry ``eps + -(h/2) kappa``; the axial (``y``) membrane
        compression is what buckles a thin tube."""
        membrane, bending = self.strains(q)
        faces = jnp.stack([membrane + 0.5 * self.material.thickness * bending,
                           membrane - 0.5 * self.material.thickness * bending])
        xx, yy, xy = faces[..., 0], faces[..., 1], 0.5 * faces[..., 2]
        principal = 0.5 * jnp.abs(xx + yy) + jnp.sqrt(0.25 * (xx - yy) ** 2 + xy**2)
        return jnp.max(principal), jnp.max(-membrane[..., 1])

    def stiffness(self, q) -> Float[Array, "n n"]:
        """Dense tangent stiffness of the strain energy alone (``jax.hessian`` of one element's energy,
        ``vmap``-ed and scatter-added), ``n = 9 N``."""
        hessians = jax.vmap(jax.hessian(element_energy), (0, 0, None))(self.mesh.gather(q), self.references,
                                                                      self.material)
        return self.assemble(hessians.reshape(-1, 36, 36))

    def tangent(self, q, q_dot=None) -> tuple[Float[Array, "n n"], Float[Array, "n n"]]:
        """Dense tangent stiffness ``K = d forces / dq`` and damping ``C = d forces / dq_dot``, ``n = 9 N``:
        element Jacobians (``jax.jacfwd`` of one element's force, i.e. the Hessian of its energy plus the
        damping terms) ``vmap``-ed and scatter-added."""
        q_dot = jnp.zeros_like(q) if q_dot is None else q_dot
        jacobians = jax.vmap(jax.jacfwd(element_force, argnums=(0, 1)), (0, 0, 0, None))
        k_e, c_e = jacobians(self.mesh.gather(q), self.mesh.gather(q_dot), self.references, self.material)
        return self.assemble(k_e.reshape(-1, 36, 36)), self.assemble(c_e.reshape(-1, 36, 36))

    def assemble(self, per_element: Float[Array, "E 36 36"]) -> Float[Array, "n n"]:
        """Scatter-add element matrices into the dense ``9 N x 9 N`` matrix."""
        dofs = self.mesh.element_dofs()
        n = 9 * self.mesh.n_nodes
        return jnp.zeros((n, n)).at[dofs[:, :, None], dofs[:, None, :]].add(per_element)

    def mass_matrix(self) -> Float[Array, "m m"]:
        """Scalar mass ``M_s`` over the ``(node, slot)`` pairs, ``m = 3 N`` (``M = M_s (x) I_3``), constant."""
        m_e = jax.vmap(element_mass, (0, None))(self.references, self.material)
        dofs = (3 * self.mesh.connectivity[:, :, None] + np.arange(3)).reshape(-1, 12)
        m = 3 * self.mesh.n_nodes
        return jnp.zeros((m, m)).at[dofs[:, :, None], dofs[:, None, :]].add(m_e)

    def kinetic_energy(self, q_dot: Float[Array, "N 3 3"], mass: Float[Array, "m m"] | None = None):
        """``1/2 q_dot^T M q_dot`` [J] (``mass``: :meth:`mass_matrix`, computed if not given)."""
        mass = self.mass_matrix() if mass is None else mass
        v = q_dot.reshape(-1, 3)
        return 0.5 * jnp.sum(v * (mass @ v))


def cylinder_mesh(radius, length, n_circ: int, n_axial: int, n_gauss: int = 4) -> ShellMesh:
    """Closed cylinder of mid-surface radius ``radius`` along ``+z`` from ``z = 0`` to ``length``:
    ``n_circ x n_axial`` elements, nodes ``j n_circ + i`` at angle ``2 pi i / n_circ`` and ``z = j length /
    n_axial``; ``x`` runs along the circumference (unit tangent), ``y`` along the axis, so the normal points
    outward. Rings ``j = 0`` and ``j = n_axial`` are the ends (:func:`ring_nodes`)."""
    radius, length = jnp.asarray(radius, float), jnp.asarray(length, float)
    phi = 2.0 * jnp.pi * jnp.arange(n_circ) / n_circ
    z = length * jnp.arange(n_axial + 1) / n_axial
    ring = jnp.stack([radius * jnp.cos(phi), radius * jnp.sin(phi)], -1)
    tangent = jnp.stack([-jnp.sin(phi), jnp.cos(phi), jnp.zeros_like(phi)], -1)
    pos = jnp.concatenate([jnp.broadcast_to(ring, (n_axial + 1, n_circ, 2)),
                           jnp.broadcast_to(z[:, None, None], (n_axial + 1, n_circ, 1))], -1)
    axial = jnp.broadcast_to(jnp.array([0.0, 0.0, 1.0]), pos.shape)
    reference = jnp.stack([pos, jnp.broadcast_to(tangent, pos.shape), axial], axis=2).reshape(-1, 3, 3)
    node = lambda i, j: j * n_circ + i % n_circ  # noqa: E731
    elements = tuple((node(i, j), node(i + 1, j), node(i + 1, j + 1), node(i, j + 1))
                     for j in range(n_axial) for i in range(n_circ))
    size = jnp.broadcast_to(jnp.stack([2.0 * jnp.pi * radius / n_circ, length / n_axial]), (len(elements), 2))
    return ShellMesh(reference, size, elements, n_gauss)


def ring_nodes(n_circ: int, n_axial: int, end: int) -> np.ndarray:
    """Node indices of the end ring ``end`` (0: ``z = 0``, 1: ``z = length``) of :func:`cylinder_mesh`."""
    return np.arange(n_circ) + (0 if end == 0 else n_axial * n_circ)


def plate_mesh(length, width, n_x: int, n_y: int, n_gauss: int = 4) -> ShellMesh:
    """Flat rectangular plate ``[0, length] x [0, width]`` in the ``z = 0`` plane, ``n_x x n_y`` elements,
    nodes ``j (n_x + 1) + i`` at ``(i length / n_x, j width / n_y, 0)``."""
    length, width = jnp.asarray(length, float), jnp.asarray(width, float)
    x = length * jnp.arange(n_x + 1) / n_x
    y = width * jnp.arange(n_y + 1) / n_y
    xx, yy = jnp.meshgrid(x, y)  # (n_y + 1, n_x + 1)
    pos = jnp.stack([xx, yy, jnp.zeros_like(xx)], -1).reshape(-1, 3)
    reference = jnp.stack([pos, jnp.broadcast_to(jnp.array([1.0, 0.0, 0.0]), pos.shape),
                           jnp.broadcast_to(jnp.array([0.0, 1.0, 0.0]), pos.shape)], axis=1)
    node = lambda i, j: j * (n_x + 1) + i  # noqa: E731
    elements = tuple((node(i, j), node(i + 1, j), node(i + 1, j + 1), node(i, j + 1))
                     for j in range(n_y) for i in range(n_x))
    size = jnp.broadcast_to(jnp.stack([length / n_x, width / n_y]), (len(elements), 2))
    return ShellMesh(reference, size, elements, n_gauss)


__all__ = [
    "ElementReference",
    "Shell",
    "ShellMaterial",
    "ShellMesh",
    "cylinder_mesh",
    "element_dissipation",
    "element_energy",
    "element_force",
    "element_mass",
    "element_reference",
    "element_strains",
    "plate_mesh",
    "ring_nodes",
    "shape_functions",
    "shape_table",
]
