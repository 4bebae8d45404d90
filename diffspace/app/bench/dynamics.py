"""``diffspace bench``, rigid-body dynamics: batched forward dynamics and mass matrix vs Pinocchio."""

from __future__ import annotations

import numpy as np

from .common import FD_ROBOT, BenchConfig, Progress, compile_timed, random_states, timed

def bench_dynamics(cfg: BenchConfig, progress: Progress) -> dict:
    """Batched forward dynamics and mass matrix vs Pinocchio ``aba``/``crba`` (7-DOF floating arm)."""
    import jax
    import jax.numpy as jnp

    from ... import forward_dynamics, load_robot, mass_matrix

    robot = load_robot(FD_ROBOT)
    rng = np.random.default_rng(cfg.seed)
    q, v, tau = random_states(robot, cfg.fd_batch, rng)
    qj, vj, tj = jnp.asarray(q), jnp.asarray(v), jnp.asarray(tau)
    res: dict = {"fd_robot": FD_ROBOT.name, "fd_batch_size": cfg.fd_batch, "fd_nv": robot.nv}

    progress.stage("compile batched forward dynamics")
    fd_batched = jax.vmap(forward_dynamics, in_axes=(None, 0, 0, 0))
    fd_c, res["forward_dynamics_compile_s"] = compile_timed(fd_batched, robot, qj, vj, tj)
    mm_c, res["mass_matrix_compile_s"] = compile_timed(jax.vmap(mass_matrix, in_axes=(None, 0)), robot, qj)
    fd1_c, res["forward_dynamics_single_compile_s"] = compile_timed(forward_dynamics, robot, qj[0], vj[0], tj[0])
    progress.done()

    progress.stage(f"time batched forward dynamics (batch {cfg.fd_batch})")
    res["forward_dynamics_batch_s"] = timed(lambda: fd_c(robot, qj, vj, tj), cfg.fd_repeats)
    res["forward_dynamics_per_sample_s"] = res["forward_dynamics_batch_s"] / cfg.fd_batch
    res["mass_matrix_batch_s"] = timed(lambda: mm_c(robot, qj), cfg.fd_repeats)
    res["mass_matrix_per_sample_s"] = res["mass_matrix_batch_s"] / cfg.fd_batch
    res["forward_dynamics_single_call_s"] = timed(
        lambda: fd1_c(robot, qj[0], vj[0], tj[0]), 10 * cfg.fd_repeats
    )
    accel = np.asarray(fd_c(robot, qj, vj, tj))
    progress.done()

    progress.stage("time Pinocchio aba/crba")
    try:
        import pinocchio  # noqa: F401
    except ImportError:
        progress.write("pinocchio not installed: skipping the Pinocchio comparison (pip install pin)")
        res["pinocchio"] = "not installed"
        progress.done()
        return res
    from ...io.pinocchio import PinocchioModel

    ref = PinocchioModel(FD_ROBOT, robot)
    pin, model, data = ref.pin, ref.model, ref.data
    calls = min(cfg.pin_calls, cfg.fd_batch)
    qs = [ref.q(q[i]) for i in range(calls)]
    vs = [ref.v(v[i]) for i in range(calls)]
    ts = [ref.v(tau[i]) for i in range(calls)]
    diff = max(
        float(np.max(np.abs(pin.aba(model, data, qs[i], vs[i], ts[i])[ref.v_perm] - accel[i])))
        for i in range(min(calls, 20))
    )
    res["forward_dynamics_max_abs_diff_vs_pinocchio"] = diff
    repeats = max(3, cfg.pin_calls // calls)

    def loop_aba():
        for i in range(calls):
            pin.aba(model, data, qs[i], vs[i], ts[i])

    def loop_crba():
        for i in range(calls):
            pin.crba(model, data, qs[i])

    res["pinocchio_aba_per_call_s"] = timed(loop_aba, repeats) / calls
    res["pinocchio_crba_per_call_s"] = timed(loop_crba, repeats) / calls
    res["pinocchio_version"] = pin.__version__
    aba, crba = res["pinocchio_aba_per_call_s"], res["pinocchio_crba_per_call_s"]
    res["forward_dynamics_per_sample_vs_pinocchio_aba"] = res["forward_dynamics_per_sample_s"] / aba
    res["mass_matrix_per_sample_vs_pinocchio_crba"] = res["mass_matrix_per_sample_s"] / crba
    res["forward_dynamics_single_call_vs_pinocchio_aba"] = res["forward_dynamics_single_call_s"] / aba
    progress.done()
    return res
