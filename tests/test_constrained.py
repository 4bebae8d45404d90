"""Maximal-coordinate constrained dynamics (integrate.constrained, bodies.rigid/joints/multibody) against
the minimal-coordinate engine, analytic reactions, conservation laws, and with/without stabilisation."""

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import diffspace as ds
from diffspace.core import spatial
from diffspace.actuation import RestToRest
from diffspace.bodies import WORLD, Anchor, JointAngle, Revolute, RigidBodies, Multibody, RigidState, Weld
from diffspace.bodies import maximal_state, revolute_joints, rigid_bodies
from diffspace.integrate import SolverSettings, Stabilization, constrained_accelerations, simulate, solve_constrained
from diffspace.core.robot import LinkTree, build_robot
from diffspace.core.status import Status


def _random_inertia(rng):
    principal = rng.uniform(0.2, 1.0, 3)
    rot, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    return rot @ np.diag(principal) @ rot.T


def random_chain(seed: int = 0):
    """A free-floating base with two revolute links: random axes, placements, CoMs and full inertias."""
    rng = np.random.default_rng(seed)
    axes = [a / np.linalg.norm(a) for a in rng.normal(size=(3, 3))]
    tree = LinkTree(
        link_names=["base", "link1", "link2"],
        joint_names=["", "j1", "j2"],
        parents=[-1, 0, 1],
        kinds=["fixed", "revolute", "revolute"],
        rot=[np.eye(3)] + [np.asarray(spatial.so3_exp(rng.normal(size=3))) for _ in range(2)],
        pos=[np.zeros(3)] + [rng.uniform(-0.6, 0.6, 3) for _ in range(2)],
        axis=axes,
        mass=[6.0, 1.5, 1.0],
        com=[rng.uniform(-0.2, 0.2, 3) for _ in range(3)],
        inertia=[_random_inertia(rng) for _ in range(3)],
        lower=[0.0, -np.inf, -np.inf],
        upper=[0.0, np.inf, np.inf],
    )
    return build_robot(tree)


@eqx.filter_jit
def run(system, q0, w0, t_final, stab, rtol, atol, n_save: int, solver=None, multipliers=False):
    """One compiled program per system structure (arrays, tolerances and horizon are traced)."""
    return solve_constrained(
        system, q0, w0, t_final, stab, solver=solver, settings=SolverSettings(rtol, atol, n_save=n_save),
        multipliers=multipliers
    )


def tolerances(rtol):
    return jnp.asarray(rtol), jnp.asarray(rtol * 1e-2)


class JointTorques(eqx.Module):
    """``tau_k = amplitude_k sin(2 pi t)`` on every revolute joint of a multibody."""

    bodies: RigidBodies
    joints: tuple
    amplitude: jax.Array

    def __call__(self, t, q, w):
        tau = self.amplitude * jnp.sin(2.0 * jnp.pi * t)
        return sum(joint.torque(self.bodies, q, tau[k]) for k, joint in enumerate(self.joints))


@eqx.filter_jit
def chain_errors(robot, q0, v0, amplitude):
    """Both formulations of a torque-driven free-floating chain over 2 s; their largest differences."""
    torque = lambda t, q, v: amplitude * jnp.sin(2.0 * jnp.pi * t)  # noqa: E731
    reference = simulate(robot, q0, v0, 2.0, torque, settings=SolverSettings(rtol=1e-11, atol=1e-13, n_save=21))
    bodies, joints = rigid_bodies(robot), revolute_joints(robot)
    start = maximal_state(robot, q0, v0)
    momentum0 = bodies.momentum(start.q, start.w)
    system = Multibody(bodies, joints, JointTorques(bodies, joints, amplitude), momentum=momentum0)
    sol = solve_constrained(system, start.q, start.w, 2.0, Stabilization(10.0, 10.0),
                            settings=SolverSettings(rtol=1e-11, atol=1e-13, n_save=21), multipliers=True)
    expected = jax.vmap(lambda q, v: maximal_state(robot, q, v))(reference.q, reference.v)
    got = jax.vmap(RigidState.from_flat)(sol.q, sol.w)
    angles = jax.vmap(lambda q: jnp.stack([j.angle(bodies.placements(q)) for j in joints]))(sol.q)
    momentum = jax.vmap(bodies.momentum)(sol.q, sol.w)
    return {
        "status": sol.status,
        "position": jnp.abs(got.position - expected.position).max(),
        "rotation": jnp.abs(jax.vmap(bodies.rotations)(sol.q) - spatial.quat_to_rotation(expected.quaternion)).max(),
        "omega": jnp.abs(got.omega - expected.omega).max(),
        "angles": jnp.abs(angles - reference.q[:, 7:]).max(),
        "momentum_start": jnp.abs(momentum0 - jnp.concatenate(ds.momentum(robot, q0, v0))).max(),
        "momentum_drift": jnp.abs(momentum - momentum0).max(),
        "momentum_multipliers": jnp.abs(sol.multipliers[:, system.n_constraints :]).max(),
        "violation": sol.position_violation.max(),
    }


def test_random_chain_matches_minimal_coordinates_and_conserves_momentum():
    """A 3D chain (random axes, offsets, full inertias, initial twist) in both formulations, rtol 1e-11."""
    robot = random_chain()
    q0 = robot.neutral().at[7:].set(jnp.array([0.4, -0.8]))
    v0 = jnp.asarray(np.random.default_rng(1).normal(size=robot.nv) * 0.5)
    err = chain_errors(robot, q0, v0, jnp.array([0.8, -0.5]))
    assert int(err["status"]) == Status.OK
    assert err["position"] < 1e-8 and err["rotation"] < 1e-8 and err["omega"] < 1e-7 and err["angles"] < 1e-8
    assert err["momentum_start"] < 1e-12 and err["momentum_drift"] < 1e-10
    # with only internal forces the momentum rows carry no load: their multipliers vanish
    assert err["momentum_multipliers"] < 1e-8
    assert err["violation"] < 1e-10


def pendulum(mass=2.0, offset=0.7, inertia=0.3):
    """A body pinned to the world at the origin (axis z), its CoM ``offset`` along its own x axis."""
    bodies = RigidBodies(("bob",), jnp.array([mass]), inertia * jnp.eye(3)[None])
    return bodies, Revolute(Anchor(WORLD, jnp.zeros(3)), Anchor(0, jnp.array([-offset, 0.0, 0.0])))


def pendulum_start(offset, angle):
    position = offset * jnp.array([jnp.cos(angle), jnp.sin(angle), 0.0])
    quaternion = jnp.array([0.0, 0.0, jnp.sin(angle / 2), jnp.cos(angle / 2)])
    return RigidState.at_rest(position[None], quaternion[None])


class Gravity(eqx.Module):
    bodies: RigidBodies
    g: float = 9.81

    def __call__(self, t, q, w):
        return self.bodies.wrench(q, 0, jnp.array([0.0, -self.bodies.mass[0] * self.g, 0.0]), jnp.zeros(3))


def test_pendulum_reaction_is_newtons_law_and_energy_is_conserved():
    m, d, j, g = 2.0, 0.7, 0.3, 9.81
    bodies, joint = pendulum(m, d, j)
    start = pendulum_start(d, 1.0)
    system = Multibody(bodies, (joint,), Gravity(bodies, g))
    stabilization = Stabilization(10.0, 10.0)
    sol = run(system, start.q, start.w, jnp.asarray(2.0), stabilization, *tolerances(1e-11), 41, multipliers=True)
    assert int(sol.status) == Status.OK
    theta = jax.vmap(lambda q: joint.angle(bodies.placements(q)))(sol.q)
    rate = sol.w[:, 5]
    pivot_inertia = j + m * d * d
    accel = -m * g * d * jnp.cos(theta) / pivot_inertia  # I_p theta'' = -m g d cos(theta)
    c, s = jnp.cos(theta), jnp.sin(theta)
    com_accel = d * jnp.stack([-s * accel - c * rate**2, c * accel - s * rate**2, 0 * c], axis=1)
    reaction = m * com_accel - m * jnp.array([0.0, -g, 0.0])  # force of the pin on the body
    assert np.abs(sol.multipliers[:, :3] - reaction).max() < 1e-8 * m * g
    energy = 0.5 * pivot_inertia * rate**2 + m * g * d * s
    assert np.abs(energy - energy[0]).max() < 1e-9 * m * g * d
    assert sol.position_violation.max() < 1e-10


def drifting_chain():
    robot = random_chain(2)
    start = maximal_state(robot, robot.neutral().at[7:].set(jnp.array([0.3, 1.0])), jnp.linspace(-2.0, 2.0, robot.nv))
    return Multibody(rigid_bodies(robot), revolute_joints(robot)), start


def test_drift_grows_without_stabilisation_and_baumgarte_bounds_it():
    """Loose tolerances (rtol 1e-5) make the index-1 drift visible over 8 s; Baumgarte (20/s) bounds it."""
    system, start = drifting_chain()
    t_final, tol = jnp.asarray(8.0), tolerances(1e-5)
    plain = run(system, start.q, start.w, t_final, Stabilization(0.0, 0.0), *tol, 9)
    baumgarte = run(system, start.q, start.w, t_final, Stabilization(20.0, 20.0), *tol, 9)
    assert int(plain.status) == Status.OK and int(baumgarte.status) == Status.OK
    drift = np.asarray(plain.position_violation)
    assert drift[-1] > 5 * drift[1] > 0
    assert baumgarte.position_violation.max() < 0.2 * drift[-1]


@pytest.mark.slow
def test_projection_removes_drift():
    """Per-step projection (ProjectedSolver) leaves only round-off, at the same loose tolerances."""
    system, start = drifting_chain()
    sol = run(system, start.q, start.w, jnp.asarray(8.0), Stabilization(20.0, 20.0, project=True), *tolerances(1e-5), 9)
    assert int(sol.status) == Status.OK
    assert sol.position_violation.max() < 1e-12 and sol.velocity_violation.max() < 1e-12


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_implicit_solver_matches_explicit():
    """Kvaerno5 (implicit, for stiff systems) and Tsit5 give the same constrained motion (compiling the
    implicit solver's Jacobian of the KKT vector field takes minutes on 2 cores)."""
    bodies, joint = pendulum()
    start = pendulum_start(0.7, 1.0)
    system = Multibody(bodies, (joint,), Gravity(bodies))
    args = (system, start.q, start.w, jnp.asarray(1.0), Stabilization(10.0, 10.0), *tolerances(1e-9), 11)
    explicit = run(*args)
    implicit = run(*args, solver=diffrax.Kvaerno5())
    assert int(implicit.status) == Status.OK and int(explicit.status) == Status.OK
    assert np.abs(implicit.q - explicit.q).max() < 1e-8
    assert implicit.position_violation.max() < 1e-10


@pytest.mark.slow
def test_driven_joint_angle_follows_profile_and_multiplier_is_drive_torque():
    m, d, j = 2.0, 0.7, 0.3
    bodies, joint = pendulum(m, d, j)
    drive = RestToRest(0.0, 1.2, 1.0, 0.2)
    system = Multibody(bodies, (joint, JointAngle(joint, drive.angle)))
    start = pendulum_start(d, 0.0)
    stabilization = Stabilization(10.0, 10.0)
    sol = run(system, start.q, start.w, jnp.asarray(1.5), stabilization, *tolerances(1e-10), 16, multipliers=True)
    angle = jax.vmap(lambda q: joint.angle(bodies.placements(q)))(sol.q)
    assert np.abs(angle - jax.vmap(drive.angle)(sol.ts)).max() < 1e-9
    torque = (j + m * d * d) * jax.vmap(drive.acceleration)(sol.ts)
    _, drive_rows = system.joint_multipliers(sol.multipliers)
    assert np.abs(drive_rows[:, 0] + torque).max() < 1e-8 * np.abs(torque).max()


def test_welded_bodies_accelerate_as_one_rigid_body():
    """Two welded bodies under a wrench vs Newton-Euler of the composite body (numpy reference)."""
    rng = np.random.default_rng(3)
    inertia = np.stack([_random_inertia(rng) for _ in range(2)])
    mass = np.array([2.0, 1.0])
    offset_a, offset_b = np.array([0.3, -0.1, 0.2]), np.array([-0.2, 0.4, 0.1])
    relative = Rotation.from_rotvec([0.3, -0.5, 0.9]).as_matrix()
    rot_a = Rotation.from_rotvec([0.2, 0.1, -0.4]).as_matrix()
    rot_b = rot_a @ relative.T
    pos_a = np.array([0.1, 0.2, 0.3])
    pos_b = pos_a + rot_a @ offset_a - rot_b @ offset_b
    omega = np.array([0.5, -1.0, 0.7])  # common world angular velocity
    quats = Rotation.from_matrix(np.stack([rot_a, rot_b])).as_quat()  # xyzw
    state = RigidState(
        np.stack([pos_a, pos_b]), quats, np.stack([np.zeros(3), np.cross(omega, pos_b - pos_a)]),
        np.stack([rot_a.T @ omega, rot_b.T @ omega]),
    )
    force, torque = np.array([1.0, -2.0, 0.5]), np.array([0.3, 0.2, -0.4])

    @jax.jit
    def accelerations(state):
        bodies = RigidBodies(("a", "b"), jnp.asarray(mass), jnp.asarray(inertia))
        weld = Weld(Anchor(0, offset_a), Anchor(1, offset_b, relative))
        applied = lambda t, q, w: bodies.wrench(q, 1, jnp.asarray(force), jnp.asarray(torque))  # noqa: E731
        system = Multibody(bodies, (weld,), applied)
        accel, _ = constrained_accelerations(system, 0.0, state.q, state.w, Stabilization())
        return system.constraints(0.0, state.q), accel

    residual, accel = map(np.asarray, accelerations(state))
    assert np.abs(residual).max() < 1e-14
    # the composite body: Newton-Euler about its centre of mass, world axes
    com = (mass[0] * pos_a + mass[1] * pos_b) / mass.sum()
    i_world = sum(
        r @ inertia[k] @ r.T + mass[k] * (np.dot(p - com, p - com) * np.eye(3) - np.outer(p - com, p - com))
        for k, (r, p) in enumerate(((rot_a, pos_a), (rot_b, pos_b)))
    )
    alpha = np.linalg.solve(i_world, torque + np.cross(pos_b - com, force) - np.cross(omega, i_world @ omega))
    assert np.allclose(rot_a @ accel[3:6], alpha, atol=1e-12) and np.allclose(rot_b @ accel[9:12], alpha, atol=1e-12)
    accel_a = force / mass.sum() + np.cross(alpha, pos_a - com) + np.cross(omega, np.cross(omega, pos_a - com))
    assert np.allclose(accel[:3], accel_a, atol=1e-12)
