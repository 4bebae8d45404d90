r"""Approach-velocity design for capture: ``diffspace optimize`` on a ``[capture]`` config.

The design variables are the approach parameters ``p = [speed, angle1, angle2]`` (m/s, rad; see
:mod:`diffspace.scenarios.capture` for the direction) and, where the contact offers them, a discrete
``choice`` (the snare's contact node, :mod:`diffspace.scenarios.capture_snare`). Everything here works on a
generic ``metrics(p, choice) -> (peak_force, impulse, closing_speed, valid)`` (pure JAX; ``choice`` is a traced
index, so one compiled program serves every choice).

Objectives (``[optimize] objective``), with the constraint ``g_F = F_peak / F_max - 1 <= 0``:

* ``closing_speed``: maximise the normal closing speed at first touch ``v_n``;
* ``impulse``: minimise the contact impulse, subject also to ``g_v = 1 - v_n / v_min <= 0`` (a capture must
  still close at a useful speed; without it the optimum is "do not touch").

Method: a batched (``vmap``) random sweep of the box (and of the choices); for every choice, multi-start
Adam (Optax) from that choice's best feasible sweep points and random points, on the loss ``-/+ J / J_ref + mu sum B(g_i)`` with an extended log barrier
``B(g) = -log(-g)`` for ``g <= -eps`` continued quadratically beyond (so infeasible starts get a finite
penalty gradient). Gradients are ``jax.grad`` through the whole contact simulation, event times included.
The best feasible iterate is kept; a last polish moves the speed with Newton steps onto the active
constraint (the peak force grows monotonically with the speed at fixed direction). Seeding from the
sweep's best feasible point guarantees that the result is never worse than the sweep.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np

from ..io.config import Field
from ..io.results import plot_panels, print_summary, write_summary, write_timeseries

DESIGN_SECTIONS = {
    "optimize": {
        "objective": Field("str", "closing_speed", choices=("closing_speed", "impulse")),
        "peak_force_limit_N": Field("float", 60.0, gt=0.0),
        "min_closing_speed_m_s": Field("float", 0.02, gt=0.0, help="impulse objective only"),
        "speed_bounds_m_s": Field("floats", [0.01, 0.1], length=2, gt=0.0,
                                  check=lambda v: None if v[0] < v[1] else "expected [low, high] with low < high"),
        "max_angle_deg": Field("float", 30.0, gt=0.0, max=80.0, help="bound on both direction angles"),
        "n_starts": Field("int", 3, min=1, max=64),
        "steps": Field("int", 25, min=1, max=10_000),
        "learning_rate": Field("float", 0.1, gt=0.0),
        "barrier_weight": Field("float", 1e-4, gt=0.0),
        "sweep_samples": Field("int", 64, min=1, max=1_000_000),
        "chunk_size": Field("int", 32, min=1),
        "seed": Field("int", 0),
        "contact": Field("str", "rigid", choices=("rigid", "snare"),
                         help="rigid: the [target] surface; snare: a rope of the snare (capture_snare)"),
        "snare_config": Field("path", "snare_capture.toml", help="snare/rope config (contact = 'snare')"),
        "snare_nodes": Field("any", [3, 5, 8, 10, 13, 16, 20, 25], help="1-based rope nodes to choose from"),
    },
}
_EPS = 1e-3  # barrier: log branch for g <= -eps, quadratic continuation beyond


def barrier(g):
    """Extended log barrier: ``-log(-g)`` for ``g <= -eps``, its second-order Taylor continuation beyond."""
    safe = jnp.minimum(g, -_EPS)
    d = g + _EPS
    return jnp.where(g <= -_EPS, -jnp.log(-safe), -jnp.log(_EPS) + d / _EPS + 0.5 * (d / _EPS) ** 2)


class Problem:
    """The design problem: bounds, objective and constraints on top of a ``metrics`` function."""

    def __init__(self, metrics: Callable, spec: dict, choices: tuple = (None,)):
        self.metrics = metrics
        self.choices = tuple(choices)
        self.objective = spec["objective"]
        self.limit = spec["peak_force_limit_N"]
        self.v_min = spec["min_closing_speed_m_s"]
        lo, hi = spec["speed_bounds_m_s"]
        a = np.deg2rad(spec["max_angle_deg"])
        self.lower, self.upper = np.array([lo, -a, -a]), np.array([hi, a, a])
        self.mu = spec["barrier_weight"]

    def to_params(self, x):
        lo, hi = jnp.asarray(self.lower), jnp.asarray(self.upper)
        return jnp.concatenate([lo[:1] + (hi[:1] - lo[:1]) * jax.nn.sigmoid(x[:1]), hi[1:] * jnp.tanh(x[1:])])

    def to_x(self, p):
        p = np.clip(p, self.lower + 1e-6 * (self.upper - self.lower), self.upper - 1e-6 * (self.upper - self.lower))
        s = (p[:1] - self.lower[:1]) / (self.upper[:1] - self.lower[:1])
        return np.concatenate([np.log(s / (1 - s)), np.arctanh(p[1:] / self.upper[1:])])

    def evaluate(self, p, choice=0):
        """Dict of metrics, constraint values ``g`` (<= 0 feasible), feasibility and the objective (maximised)."""
        peak, impulse, closing, ok = self.metrics(p, choice)
        g_force = peak / self.limit - 1.0
        g_speed = 1.0 - closing / self.v_min
        feasible = ok & (g_force <= 0) & ((g_speed <= 0) | (self.objective != "impulse"))
        value = closing if self.objective == "closing_speed" else -impulse
        return dict(peak_force_N=peak, impulse_N_s=impulse, closing_speed_m_s=closing, valid=ok, g_force=g_force,
                    g_speed=g_speed, feasible=feasible, objective=value)

    def evaluate_row(self, row):
        """:meth:`evaluate` of a sweep row ``[p (3), choice index]``."""
        return self.evaluate(row[:3], row[3].astype(int))

    def loss(self, x, choice, scale):
        m = self.evaluate(self.to_params(x), choice)
        penalty = barrier(m["g_force"]) + (barrier(m["g_speed"]) if self.objective == "impulse" else 0.0)
        value = -m["objective"] / scale + self.mu * penalty
        return jnp.where(m["valid"] & jnp.isfinite(value), value, 1e3), m


def optimize_approach(problem: Problem, spec: dict, out: Path, progress: bool = True, initial=None) -> dict:
    """Sweep, multi-start Adam per choice and polish; returns the summary dict (also writes the history files).
    ``initial``: an optional ``[p (3), choice]`` row reported alongside the optimum."""
    import optax
    from tqdm import tqdm

    from ..design.sweep import run_chunked

    n_choices = len(problem.choices)
    rng = np.random.default_rng(spec["seed"])
    samples = rng.uniform(problem.lower, problem.upper, size=(spec["sweep_samples"], 3))
    which = rng.integers(0, n_choices, spec["sweep_samples"]) if n_choices > 1 else np.zeros(len(samples), int)
    rows = np.column_stack([samples, which.astype(float)])
    batch = jax.jit(jax.vmap(problem.evaluate_row))
    swept = run_chunked(batch, rows, spec["chunk_size"], store=None, progress=progress, label="sweep")
    feasible = swept["feasible"].astype(bool)
    score = np.where(feasible, swept["objective"], -np.inf)
    order = np.argsort(-score)
    scale = float(np.max(np.abs(swept["objective"][feasible if feasible.any() else slice(None)])))
    scale = scale if scale > 0 else 1.0

    starts, start_choice, best_value = [], [], []
    for c in range(n_choices):  # the choice's best feasible sweep points, then random points
        mine = [i for i in order if which[i] == c and feasible[i]]
        n_seed = min(max(1, spec["n_starts"] // 2 + spec["n_starts"] % 2), len(mine))
        random_starts = rng.uniform(problem.lower, problem.upper, (spec["n_starts"] - n_seed, 3))
        starts += [samples[i] for i in mine[:n_seed]] + list(random_starts)
        best_value += [score[i] for i in mine[:n_seed]] + [-np.inf] * len(random_starts)  # seeds: evaluated
        start_choice += [c] * spec["n_starts"]
    best_p, best_value, start_choice = np.array(starts), np.array(best_value), np.array(start_choice)

    # one compiled reverse-mode gradient (the choice is traced), looped over the starts (a vmapped gradient
    # through the event machinery takes about twice as long to compile as it saves in run time here)
    grad_fn = jax.jit(jax.value_and_grad(lambda x, c: problem.loss(x, c, scale), has_aux=True))
    optimizer = optax.adam(spec["learning_rate"])
    history = np.zeros((spec["steps"] + 1, len(starts)))
    bar = tqdm(total=len(starts) * (spec["steps"] + 1), desc="optimize", unit="step", disable=not progress)
    for s, start in enumerate(starts):
        x, c = jnp.asarray(problem.to_x(start)), jnp.asarray(start_choice[s])
        state = optimizer.init(x)
        for step in range(spec["steps"] + 1):
            (loss, m), grad = grad_fn(x, c)
            if bool(m["feasible"]) and float(m["objective"]) > best_value[s]:
                best_p[s], best_value[s] = np.asarray(problem.to_params(x)), float(m["objective"])
            history[step, s] = float(loss)
            bar.update(1)
            if step < spec["steps"]:
                updates, state = optimizer.update(jnp.nan_to_num(grad), state)
                x = optax.apply_updates(x, updates)
    bar.close()

    def evaluate_rows(params, choice):
        return _rows(batch, np.column_stack([params, np.full(len(params), float(choice))]), spec["chunk_size"])

    for c in range(n_choices):  # polish each choice's best start onto its active constraint
        mine = np.flatnonzero(start_choice == c)
        s = int(mine[np.argmax(best_value[mine])])
        if np.isfinite(best_value[s]):
            polished = _polish(problem, lambda params: evaluate_rows(params, c), best_p[s])
            if polished is not None and polished[1] > best_value[s]:
                best_p[s], best_value[s] = polished
    k = int(np.argmax(best_value))
    if not np.isfinite(best_value[k]):
        from ..status import SolverFailure

        raise SolverFailure(
            f"optimize: no feasible approach found ({int(feasible.sum())} of {len(samples)} sweep points feasible): "
            f"optimize.peak_force_limit_N = {problem.limit:g} may be too low for optimize.speed_bounds_m_s, or no run "
            "made and finished contact within simulation.t_final_s")
    final = _rows_metrics(evaluate_rows(best_p[k][None], start_choice[k]))[0]
    start = None
    if initial is not None:
        initial = np.asarray(initial, float)
        start = _rows_metrics(evaluate_rows(initial[None, :3], int(initial[3]) if len(initial) > 3 else 0))[0]
    sweep_best = int(order[0])
    losses = {f"start {s}": history[:, s] for s in range(history.shape[1])}
    columns = {k.replace(" ", "") + "_loss": v for k, v in losses.items()}
    write_timeseries(out, {"step": np.arange(len(history)), **columns},
                     "optimize_history")
    write_timeseries(out, {"speed_m_s": samples[:, 0], "angle1_deg": np.rad2deg(samples[:, 1]),
                           "angle2_deg": np.rad2deg(samples[:, 2]), "choice": which.astype(float),
                           **{key: swept[key].astype(float) for key in
                              ("peak_force_N", "impulse_N_s", "closing_speed_m_s", "objective", "feasible")}},
                     "sweep")
    plot_panels(out / "optimize.png", np.arange(len(history)), [("loss", losses)], xlabel="Adam step")
    summary = {
        "objective": problem.objective,
        "peak_force_limit_N": problem.limit,
        "optimum_speed_m_s": float(best_p[k][0]),
        "optimum_angles_deg": np.rad2deg(best_p[k][1:]).tolist(),
        "optimum_objective": float(best_value[k]),
        "optimum_peak_force_N": final["peak_force_N"],
        "optimum_impulse_N_s": final["impulse_N_s"],
        "optimum_closing_speed_m_s": final["closing_speed_m_s"],
        "optimum_constraint_force": final["g_force"],
        "optimum_constraint_speed": final["g_speed"] if problem.objective == "impulse" else None,
        "optimum_feasible": bool(final["feasible"]),
        "sweep_samples": len(samples),
        "sweep_feasible": int(feasible.sum()),
        "sweep_best_objective": float(score[sweep_best]) if feasible.any() else None,
        "sweep_best_speed_m_s": float(samples[sweep_best][0]),
        "sweep_best_angles_deg": np.rad2deg(samples[sweep_best][1:]).tolist(),
        "sweep_best_peak_force_N": float(swept["peak_force_N"][sweep_best]),
        "optimizer_not_beaten_by_sweep": bool(not feasible.any() or best_value[k] >= score[sweep_best]),
        "improvement_over_sweep": float(best_value[k] - score[sweep_best]) if feasible.any() else None,
        "initial_approach": start,
    }
    if problem.choices != (None,):
        per_choice = [float(np.max(best_value[start_choice == c])) for c in range(n_choices)]
        summary.update(optimum_choice=problem.choices[start_choice[k]], sweep_best_choice=problem.choices[which[sweep_best]],
                       choices=list(problem.choices),
                       best_objective_per_choice=[v if np.isfinite(v) else None for v in per_choice])
    return summary


def _rows(batch, rows: np.ndarray, chunk: int) -> dict:
    """Evaluate ``rows`` with the sweep's compiled batch function (padded to its chunk shape)."""
    pieces = []
    for c in range(0, len(rows), chunk):
        part = rows[c:c + chunk]
        padded = np.concatenate([part, np.repeat(part[-1:], chunk - len(part), axis=0)])
        pieces.append({k: np.asarray(v)[: len(part)] for k, v in batch(jnp.asarray(padded)).items()})
    return {k: np.concatenate([p[k] for p in pieces]) for k in pieces[0]}


def _polish(problem: Problem, evaluate_rows: Callable, p, iters: int = 5):
    """Secant-free Newton steps on the speed alone (direction fixed, derivative by a forward difference)
    onto the active constraint: ``F_peak = F_max (1 - 1e-7)`` (or ``v_n = v_min (1 + 1e-7)`` for the impulse
    objective when the force constraint is inactive). Returns the best feasible ``(params, objective)`` or None."""
    p = np.array(p, dtype=float)
    best = None
    for _ in range(iters):
        h = 1e-6 * p[0]
        rows = np.stack([p, p + np.array([h, 0.0, 0.0])])
        m = _rows_metrics(evaluate_rows(rows))
        if m[0]["feasible"] and (best is None or m[0]["objective"] > best[1]):
            best = (p.copy(), m[0]["objective"])
        if problem.objective == "closing_speed" or m[0]["g_force"] > 0:
            residual = m[0]["peak_force_N"] - problem.limit * (1 - 1e-7)
            slope = (m[1]["peak_force_N"] - m[0]["peak_force_N"]) / h
        else:  # impulse grows with the speed: lower it onto v_min
            residual = m[0]["closing_speed_m_s"] - problem.v_min * (1 + 1e-7)
            slope = (m[1]["closing_speed_m_s"] - m[0]["closing_speed_m_s"]) / h
        if not (np.isfinite(residual) and np.isfinite(slope) and slope > 0 and m[0]["valid"]):
            break
        p[0] = float(np.clip(p[0] - residual / slope, problem.lower[0], problem.upper[0]))
    return best


def _rows_metrics(out: dict) -> list[dict]:
    n = len(out["objective"])
    return [{k: np.asarray(v)[i].item() for k, v in out.items()} for i in range(n)]


def optimize(cfg: dict, out: Path) -> dict:
    """``diffspace optimize``: approach velocity of the configured capture (see the module docstring)."""
    from . import capture

    case = capture.case_from_config(cfg)
    spec = cfg["optimize"]
    if spec["contact"] == "snare":
        from .capture_snare import optimize_snare_capture

        return optimize_snare_capture(case, cfg, out)
    metrics = capture.approach_metrics(case)
    problem = Problem(lambda p, choice: metrics(p), spec)
    summary = optimize_approach(problem, spec, out, initial=np.asarray(case.params))
    write_summary(out, summary)
    print_summary(summary, f"capture approach optimisation ({problem.objective})")
    return summary
