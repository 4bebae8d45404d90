r"""An independent model of the deploying rover mast (Liu, Wen & Zhang 2024, Machines 12:243): rigid cube modules
joined by segmented Timoshenko tubes, built in Pinocchio and integrated with SciPy (no diffspace code).

**Planar.** The drive turns the mast about the world ``z`` axis and the mast is symmetric about its ``x-y``
plane, so the motion stays in that plane: in-plane bending, shear and the drive are all that move. (Its
first natural frequency is the in-plane member of the degenerate bending pair; torsion and axial modes are
higher and not excited.) The tube's axial stretch is left out (axial modes > 60 Hz, uncoupled from in-plane
bending at linear order).

**Tube** (inner diameter ``d_i``, wall ``t``, length ``L``): ``A = pi (r_o^2 - r_i^2)``, ``I = pi (r_o^4 -
r_i^4) / 4``, ``G = E / (2 (1 + nu))`` and Cowper's (1966) shear coefficient of a hollow circle with ``m =
r_i / r_o``, ``kappa = 6 (1 + nu)(1 + m^2)^2 / ((7 + 6 nu)(1 + m^2)^2 + (20 + 12 nu) m^2)`` (0.535 here). The
tube is ``N`` cells of length ``l = L / N``; at every cell centre a hinge about ``z`` with a spring ``EI / l``
and a slide along the cell's transverse axis with a spring ``kappa G A / l``, i.e. the midpoint rule of the
Timoshenko energy ``1/2 int (EI psi'^2 + kappa G A gamma^2) ds``: the end-load compliance of a cantilever is
``L^3 (1 - 1 / (4 N^2)) / (3 EI) + L / (kappa G A)`` (exact to ``O(1/N^2)``). The pieces between hinges are
rigid tube slices (mass ``rho A l``, inertia ``m ((r_i^2 + r_o^2) / 4 + l^2 / 12)`` about ``z``); the half
cells at the ends are rigid with the modules, whose faces clamp the tube.

**Modules**: solid cubes (edge ``a``, inertia ``m a^2 / 6``); interface ``k`` joins the ``+x`` face of module
``k`` to the ``-x`` face of module ``k + 1``. **Drive**: module 0 turns about ``z`` through its centre by the
prescribed angle ``theta(t)`` (trapezoidal rate, Eq. (47)). **Damping**: Kelvin-Voigt ``beta`` on every spring
(``beta k q_dot``), i.e. stiffness-proportional, ``zeta = beta omega / 2`` per mode. No gravity.

With ``q = [theta, q_f]``, the flexible coordinates obey ``M_ff(q) q_f'' = -K q_f - beta K q_f' - tau_f``,
``tau = RNEA(q, q', [theta'', 0])`` (Pinocchio: Coriolis, centrifugal and the drive's inertial coupling), one
dense solve per evaluation; SciPy's Radau integrates it between the drive's acceleration jumps.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace

import numpy as np
import pinocchio as pin
import scipy.linalg
from scipy.integrate import solve_ivp


@dataclass(frozen=True)
class MastSpec:
    """The mast of configs/deployment_scheme*.toml (SI). ``stiffness_scale`` multiplies both tube springs."""

    n_modules: int
    edge: float = 0.2
    module_density: float = 7850.0
    length: float = 0.105
    inner_diameter: float = 0.084
    thickness: float = 0.002
    young: float = 2.4e9
    poisson: float = 0.35
    density: float = 1100.0
    damping: float = 2.5e-3
    shear: bool = True  # False: Euler-Bernoulli (rigid in shear)
    stiffness_scale: float = 1.0

    @property
    def radii(self) -> tuple[float, float]:
        return 0.5 * self.inner_diameter, 0.5 * self.inner_diameter + self.thickness

    @property
    def area(self) -> float:
        r_i, r_o = self.radii
        return np.pi * (r_o**2 - r_i**2)

    @property
    def bending_rigidity(self) -> float:
        r_i, r_o = self.radii
        return self.stiffness_scale * self.young * 0.25 * np.pi * (r_o**4 - r_i**4)

    @property
    def shear_rigidity(self) -> float:
        """``kappa G A`` (Cowper's hollow circle)."""
        r_i, r_o = self.radii
        m2, nu = (r_i / r_o) ** 2, self.poisson
        kappa = 6.0 * (1 + nu) * (1 + m2) ** 2 / ((7 + 6 * nu) * (1 + m2) ** 2 + (20 + 12 * nu) * m2)
        return self.stiffness_scale * kappa * self.young / (2.0 * (1.0 + nu)) * self.area


def _tube_inertia(spec: MastSpec, piece: float, centre: float) -> pin.Inertia:
    """A rigid tube slice of length ``piece`` whose centre is ``centre`` along the local x axis."""
    r_i, r_o = spec.radii
    mass = spec.density * spec.area * piece
    transverse = mass * ((r_i**2 + r_o**2) / 4.0 + piece**2 / 12.0)
    return pin.Inertia(mass, np.array([centre, 0.0, 0.0]), np.diag([mass * (r_i**2 + r_o**2) / 2.0, transverse, transverse]))


def _cube(spec: MastSpec, centre: float) -> pin.Inertia:
    mass = spec.module_density * spec.edge**3
    return pin.Inertia(mass, np.array([centre, 0.0, 0.0]), np.eye(3) * mass * spec.edge**2 / 6.0)


def _translation(x: float) -> pin.SE3:
    return pin.SE3(np.eye(3), np.array([x, 0.0, 0.0]))


def build_chain(spec: MastSpec, n_cells: int) -> tuple[pin.Model, np.ndarray, np.ndarray]:
    """The Pinocchio model (joint 1 = drive), the spring stiffness of every flexible coordinate and a mask of
    the hinges among them."""
    model = pin.Model()
    model.gravity = pin.Motion.Zero()
    cell, half = spec.length / n_cells, 0.5 * spec.length / n_cells
    parent = model.addJoint(0, pin.JointModelRZ(), pin.SE3.Identity(), "drive")
    module_at = 0.0  # module centre along the current body's x axis
    stiffness, hinges = [], []
    for k in range(spec.n_modules):
        model.appendBodyToJoint(parent, _cube(spec, module_at), pin.SE3.Identity())
        if k == spec.n_modules - 1:
            break
        face = module_at + 0.5 * spec.edge
        model.appendBodyToJoint(parent, _tube_inertia(spec, half, face + 0.5 * half), pin.SE3.Identity())
        offset = face + half
        for j in range(n_cells):
            parent = model.addJoint(parent, pin.JointModelRZ(), _translation(offset), f"bend{k}_{j}")
            stiffness.append(spec.bending_rigidity / cell)
            hinges.append(True)
            if spec.shear:
                parent = model.addJoint(parent, pin.JointModelPY(), pin.SE3.Identity(), f"shear{k}_{j}")
                stiffness.append(spec.shear_rigidity / cell)
                hinges.append(False)
            piece = cell if j < n_cells - 1 else half
            model.appendBodyToJoint(parent, _tube_inertia(spec, piece, 0.5 * piece), pin.SE3.Identity())
            offset = cell
        module_at = half + 0.5 * spec.edge
    return model, np.array(stiffness), np.array(hinges)


def natural_frequencies(spec: MastSpec, n_cells: int, count: int = 3) -> np.ndarray:
    """Lowest in-plane natural frequencies [Hz] with the drive locked (undamped, at rest)."""
    model, stiffness, _ = build_chain(spec, n_cells)
    mass = _mass_matrix(model, np.zeros(model.nq))[1:, 1:]
    w2 = scipy.linalg.eigh(np.diag(stiffness), mass, eigvals_only=True, subset_by_index=[0, min(count, stiffness.size) - 1])
    return np.sqrt(w2) / (2.0 * np.pi)


def _mass_matrix(model, q) -> np.ndarray:
    m = pin.crba(model, model.createData(), q)
    return np.triu(m) + np.triu(m, 1).T


# ---------------------------------------------------------------------------------------------- drive
@dataclass(frozen=True)
class TrapezoidDrive:
    """Trapezoidal rate (paper Eq. (47)): ``angle`` [rad] in ``duration`` [s], constant acceleration during
    ``ramp`` [s] at both ends, cruise rate ``angle / (duration - ramp)``."""

    angle: float = np.pi / 2
    duration: float = 6.1
    ramp: float = 0.1

    @property
    def breakpoints(self) -> tuple[float, ...]:
        return 0.0, self.ramp, self.duration - self.ramp, self.duration

    def __call__(self, t: float) -> tuple[float, float, float]:
        """``(theta, theta', theta'')``."""
        rate = self.angle / (self.duration - self.ramp)
        acc = rate / self.ramp
        if t <= 0.0:
            return 0.0, 0.0, 0.0
        if t < self.ramp:
            return 0.5 * acc * t**2, acc * t, acc
        if t < self.duration - self.ramp:
            return rate * (t - 0.5 * self.ramp), rate, 0.0
        if t < self.duration:
            left = self.duration - t
            return self.angle - 0.5 * acc * left**2, acc * left, -acc
        return self.angle, 0.0, 0.0


# ---------------------------------------------------------------------------------------------- deployment
@dataclass(frozen=True)
class Deployment:
    """Time series on ``t`` [s]: drive angle [rad], the last module's absolute angular acceleration about
    ``z`` [rad/s^2] and the drive torque [N m]; ``motion_end`` [s]."""

    t: np.ndarray
    theta: np.ndarray
    end_acceleration: np.ndarray
    drive_torque: np.ndarray
    motion_end: float

    def residual_vibration(self) -> dict:
        """Peak and RMS of ``|alpha|`` [deg/s^2] over the samples after the motion (as the scenario defines
        them), and the peak drive torque [N m]."""
        after = np.abs(np.rad2deg(self.end_acceleration[self.t > self.motion_end]))
        return {"residual_vibration_peak_deg_s2": float(after.max()),
                "residual_vibration_rms_deg_s2": float(np.sqrt(np.mean(after**2))),
                "peak_joint_torque_N_m": float(np.max(np.abs(self.drive_torque)))}


class MastDynamics:
    """The equations of motion of the module notes for one chain."""

    def __init__(self, spec: MastSpec, n_cells: int, drive: TrapezoidDrive):
        self.model, self.stiffness, self.hinges = build_chain(spec, n_cells)
        self.data = self.model.createData()
        self.damping = spec.damping
        self.drive = drive
        self.n = self.stiffness.size

    def _full(self, t, y):
        theta, rate, acc = self.drive(t)
        return np.concatenate([[theta], y[:self.n]]), np.concatenate([[rate], y[self.n:]]), acc

    def accelerations(self, t, y) -> tuple[np.ndarray, float]:
        """Flexible accelerations and the drive torque at state ``y = [q_f, q_f']``."""
        q, v, acc = self._full(t, y)
        a = np.zeros(self.n + 1)
        a[0] = acc
        tau = pin.rnea(self.model, self.data, q, v, a)
        mass = _mass_matrix(self.model, q)
        spring = self.stiffness * (y[:self.n] + self.damping * y[self.n:])
        a_f = scipy.linalg.solve(mass[1:, 1:], -spring - tau[1:], assume_a="pos")
        return a_f, float(tau[0] + mass[0, 1:] @ a_f)

    def field(self, t, y) -> np.ndarray:
        return np.concatenate([y[self.n:], self.accelerations(t, y)[0]])

    def jacobian(self, t, y) -> np.ndarray:
        """``d field / d y`` for the implicit integrator's Newton iteration: ``M_ff(q)^-1 K`` and ``beta`` times
        it (the Coriolis and geometric terms, smaller by ``theta'^2 / omega^2``, are left out: a Newton matrix
        need not be exact)."""
        q, _, _ = self._full(t, y)
        k = scipy.linalg.solve(_mass_matrix(self.model, q)[1:, 1:], np.diag(self.stiffness), assume_a="pos")
        return np.block([[np.zeros((self.n, self.n)), np.eye(self.n)], [-k, -self.damping * k]])

    def simulate(self, t_eval: np.ndarray, rtol: float = 1e-8) -> Deployment:
        """From rest, undeformed, at ``t = 0``; piecewise between the drive's acceleration jumps."""
        y = np.zeros(2 * self.n)
        edges = sorted({*self.drive.breakpoints, float(t_eval[-1])})
        states = []
        for start, stop in itertools.pairwise(edges):
            inside = t_eval[(t_eval >= start) & ((t_eval < stop) | (stop == edges[-1]))]
            sol = solve_ivp(self.field, (start, stop), y, method="Radau", t_eval=inside, jac=self.jacobian,
                            rtol=rtol, atol=rtol * 1e-3, dense_output=True)
            if sol.status != 0:
                raise RuntimeError(f"Radau failed on [{start}, {stop}]: {sol.message}")
            states.append(sol.y.T)
            y = sol.sol(stop)
        states = np.concatenate(states)
        out = [self.accelerations(t, s) for t, s in zip(t_eval, states)]
        end = np.array([self.drive(t)[2] + a[self.hinges].sum() for t, (a, _) in zip(t_eval, out)])
        return Deployment(t_eval, np.array([self.drive(t)[0] for t in t_eval]), end,
                          np.array([torque for _, torque in out]), self.drive.duration)


def with_frequency(spec: MastSpec, n_cells: int, target_hz: float) -> MastSpec:
    """``spec`` with both tube springs scaled so that its first frequency is ``target_hz`` (the modules and
    the tube's mass unchanged, every frequency scales by the same factor)."""
    first = natural_frequencies(spec, n_cells, 1)[0]
    return replace(spec, stiffness_scale=spec.stiffness_scale * (target_hz / first) ** 2)


# ---------------------------------------------------------------------------------------------- diffspace side
def diffspace_frequencies(config, overrides=(), count: int = 4) -> np.ndarray:
    """diffspace's lowest natural frequencies [Hz] of the mast with the drive locked, through its public API
    (imported here so that the model above shares nothing with it): the generalised eigenproblem of its
    constant mass matrix and reference stiffness on the null space of the constraint Jacobian at rest."""
    import jax

    from diffspace.integrate.generalized_alpha import constraint_jacobian
    from diffspace.scenarios import load_scenario
    from diffspace.scenarios.deployment import reference_coordinates

    scenario = load_scenario(config, list(overrides))

    @jax.jit
    def linearised(scenario):
        mast = scenario.mast(scenario.params)
        y0 = reference_coordinates(mast)
        return mast.mass, mast.reference_stiffness(y0), constraint_jacobian(mast, 0.0, y0)

    mass, stiffness, jacobian = map(np.asarray, linearised(scenario))
    basis = scipy.linalg.null_space(jacobian)
    w2 = scipy.linalg.eigh(basis.T @ stiffness @ basis, basis.T @ mass @ basis, eigvals_only=True,
                           subset_by_index=[0, min(count, basis.shape[1]) - 1])
    return np.sqrt(w2) / (2.0 * np.pi)


def diffspace_deployment(config, overrides=()) -> tuple[Deployment, dict]:
    """diffspace's deployment run (scenario ``simulate``) as a :class:`Deployment` and its summary."""
    import jax

    from diffspace.scenarios import load_scenario

    scenario = load_scenario(config, list(overrides))
    out = jax.jit(type(scenario).simulate)(scenario, scenario.params)
    run = Deployment(np.asarray(out.t), np.asarray(out.theta), np.asarray(out.end_acceleration),
                     np.asarray(out.drive_torque), float(out.motion_end))
    return run, scenario.summary(out)
