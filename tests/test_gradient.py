"""Design gradients by forward mode inside a reverse-mode rule (``diffspace.design.gradient``) and the
forward/reverse switch of the ODE solves (``diffspace.integrate.adjoint``)."""

from pathlib import Path

import diffrax
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from diffspace.design.gradient import design_metrics
from diffspace.integrate import adjoint_for, solve_adjoint
from diffspace.scenarios import load_scenario

from .toy_scenario import Toy

ROOT = Path(__file__).resolve().parents[1]
IMPACT_KEYS = ("impact.approach_speed_m_s", "contact.stiffness_N_m_n", "contact.restitution_c")
IMPACT_OUTPUTS = ("peak_force_N", "detached_velocity_m_s", "contact_duration_s", "max_indentation_m")


def _toy() -> Toy:
    return Toy.from_config({"toy": {"rate": 1.0, "amplitude": 2.0, "horizon_s": 1.0}})


def test_differentiation_is_passed_explicitly():
    """No hidden channel: the adjoint is an argument (None: reverse mode) and a scenario carries its choice."""
    assert isinstance(solve_adjoint(), diffrax.RecursiveCheckpointAdjoint)
    assert isinstance(solve_adjoint(diffrax.ForwardMode()), diffrax.ForwardMode)
    assert isinstance(adjoint_for("forward"), diffrax.ForwardMode)
    toy = _toy()
    assert toy.differentiation == "reverse" and isinstance(toy.adjoint, diffrax.RecursiveCheckpointAdjoint)
    forward = toy.differentiated_by("forward")
    assert isinstance(forward.adjoint, diffrax.ForwardMode) and toy.differentiation == "reverse"
    with pytest.raises(ValueError, match="differentiation"):
        adjoint_for("sideways")


def test_toy_design_gradient_is_the_analytic_derivative():
    """``x(T) = A exp(-r T)``: d/dr = -T x, d/dA = x / A; non-float metrics (status) pass through; grad, jacrev
    and vmap compose with the custom rule."""
    toy = _toy()
    design = {"toy.rate": jnp.asarray(0.7), "toy.amplitude": jnp.asarray(1.5)}
    final = 1.5 * np.exp(-0.7)
    jac = jax.jacrev(lambda d: design_metrics(toy, d)["final_value"])(design)
    assert float(jac["toy.rate"]) == pytest.approx(-final, rel=1e-14)
    assert float(jac["toy.amplitude"]) == pytest.approx(final / 1.5, rel=1e-14)
    m = jax.jit(design_metrics)(toy, design)
    assert int(m["status"]) == 0 and float(m["final_value"]) == pytest.approx(final, rel=1e-14)
    # one variable differentiated, the other held: only the rate's column is formed
    g = jax.grad(lambda r: design_metrics(toy, {"toy.rate": r, "toy.amplitude": 1.5})["half_value"])(0.7)
    assert float(g) == pytest.approx(-0.5 * 1.5 * np.exp(-0.35), rel=1e-14)
    rates = jnp.array([0.2, 0.7, 3.0])
    batched = jax.vmap(jax.grad(lambda r: design_metrics(toy, {"toy.rate": r})["final_value"]))(rates)
    np.testing.assert_allclose(batched, -2.0 * np.exp(-np.asarray(rates)), rtol=1e-14)


def test_differentiating_the_scenario_through_design_metrics_raises():
    toy = _toy()
    with pytest.raises(RuntimeError, match="cannot be autodifferentiated"):
        jax.grad(lambda a: design_metrics(toy.__class__(params=toy.params, horizon=a), {})["final_value"])(1.0)


@pytest.mark.slow  # a reverse-mode compile of the impact; forward mode is checked against differences in the fast suite
def test_impact_design_jacobian_forward_inside_equals_reverse_mode():
    """The two-body impact (a hybrid solve with contact events located by root finds, the event times
    differentiated by the implicit function theorem): the design Jacobian by forward mode inside the custom
    rule equals plain reverse mode through the same solves to solver round-off (1e-9 relative per output)."""
    scenario = load_scenario(ROOT / "configs" / "impact_airtable.toml")
    design = {"impact.approach_speed_m_s": 0.09483, "contact.stiffness_N_m_n": 1.4e7, "contact.restitution_c": 0.63}
    design = {k: jnp.asarray(v) for k, v in design.items()}

    def outputs(metrics):
        return jnp.stack([metrics[n] for n in IMPACT_OUTPUTS])

    def by_forward(d):
        return outputs(design_metrics(scenario, d))

    def by_reverse(d):
        return outputs(scenario.metrics(scenario.with_design(scenario.params, d)))

    forward = jax.jit(jax.jacrev(by_forward))(design)
    reverse = jax.jit(jax.jacrev(by_reverse))(design)
    scale = np.array([np.asarray(design[k]) for k in IMPACT_KEYS])
    fwd = np.stack([np.asarray(forward[k]) for k in IMPACT_KEYS], axis=1) * scale
    rev = np.stack([np.asarray(reverse[k]) for k in IMPACT_KEYS], axis=1) * scale
    assert np.all(np.isfinite(fwd))
    rel = np.abs(fwd - rev) / np.max(np.abs(rev), axis=1, keepdims=True)
    assert rel.max() < 1e-9, rel
