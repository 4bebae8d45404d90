"""Generic Levenberg-Marquardt identification: optimum, covariance, transforms, I/O helpers."""

import tomllib

import jax.numpy as jnp
import numpy as np
import pytest

from diffspace.core.status import ConfigError
from diffspace.design.fit.least_squares import least_squares
from diffspace.io.tables import dump_toml, read_csv_columns


def test_linear_least_squares_matches_normal_equations():
    """For r = A x - b the optimum and covariance s^2 (A^T A)^-1 are known exactly."""
    rng = np.random.default_rng(0)
    A = rng.normal(size=(20, 3))
    b = A @ np.array([1.0, -2.0, 0.5]) + 0.01 * rng.normal(size=20)

    def residual(p):
        x = jnp.stack([p["a"], p["b"], p["c"]])
        return jnp.asarray(A) @ x - jnp.asarray(b)

    res = least_squares(residual, {"a": 0.0, "b": 0.0, "c": 0.0}, {n: "none" for n in "abc"})
    x_ref, *_ = np.linalg.lstsq(A, b, rcond=None)
    r_ref = A @ x_ref - b
    s2 = r_ref @ r_ref / (20 - 3)
    cov_ref = s2 * np.linalg.inv(A.T @ A)
    assert res.converged
    np.testing.assert_allclose([res.params[n] for n in "abc"], x_ref, rtol=0, atol=1e-10)
    np.testing.assert_allclose(res.covariance, cov_ref, rtol=1e-8)
    np.testing.assert_allclose([res.std_errors[n] for n in "abc"], np.sqrt(np.diag(cov_ref)), rtol=1e-8)
    np.testing.assert_allclose(res.residuals, r_ref, atol=1e-10)


def test_nonlinear_fit_with_log_and_logit_transforms():
    """y = a exp(-b t) + c with a, b > 0 (log) and c in (0, 1) (logit): recovery within 4 sigma, the
    covariance uses the natural-parameter Jacobian (delta method), and the bounds hold."""
    rng = np.random.default_rng(1)
    t = np.linspace(0.0, 4.0, 40)
    true = {"a": 2.0, "b": 1.3, "c": 0.3}
    sigma = 0.01
    y = true["a"] * np.exp(-true["b"] * t) + true["c"] + sigma * rng.normal(size=t.size)

    def residual(p):
        return (p["a"] * jnp.exp(-p["b"] * jnp.asarray(t)) + p["c"] - jnp.asarray(y)) / sigma

    res = least_squares(residual, {"a": 0.5, "b": 5.0, "c": 0.9}, {"a": "log", "b": "log", "c": ("logit", 0.0, 1.0)},
                        absolute_sigma=True)
    assert res.converged, res.message
    for name, value in true.items():
        assert abs(res.params[name] - value) < 4 * res.std_errors[name], name
    # chi^2 / dof close to 1 with correctly scaled residuals
    assert 0.5 < 2 * res.cost / (t.size - 3) < 1.6
    # Jacobian in natural units equals a finite difference of the residual
    h = 1e-6
    p0 = dict(res.params)
    for j, name in enumerate(res.names):
        up, dn = dict(p0), dict(p0)
        up[name] += h
        dn[name] -= h
        fd = (np.asarray(residual({k: jnp.asarray(v) for k, v in up.items()}))
              - np.asarray(residual({k: jnp.asarray(v) for k, v in dn.items()}))) / (2 * h)
        np.testing.assert_allclose(res.jacobian[:, j], fd, rtol=1e-6, atol=1e-6 * np.max(np.abs(fd)))
    np.testing.assert_allclose(res.covariance, np.linalg.inv(res.jacobian.T @ res.jacobian), rtol=1e-10)
    report = res.to_dict()
    assert report["converged"] and set(report["parameters"]) == set(true)


def test_bad_initial_values_raise():
    with pytest.raises(ValueError, match="> 0"):
        least_squares(lambda p: jnp.stack([p["a"] - 1.0]), {"a": -1.0})
    with pytest.raises(ValueError, match="strictly inside"):
        least_squares(lambda p: jnp.stack([p["a"] - 0.5]), {"a": 1.5}, {"a": ("logit", 0.0, 1.0)})


def test_read_csv_columns_reports_column_and_row(tmp_path):
    good = tmp_path / "good.csv"
    good.write_text("x,y,z\n1,2,3\n4.5,5,6\n")
    cols = read_csv_columns(good, ["x", "z"])
    np.testing.assert_array_equal(cols["x"], [1.0, 4.5])
    with pytest.raises(ConfigError, match="missing column.*y_missing"):
        read_csv_columns(good, ["x", "y_missing"])
    bad = tmp_path / "bad.csv"
    bad.write_text("x,y\n1,2\n3,abc\n")
    with pytest.raises(ConfigError, match=r"row 2, column y: not a number: 'abc'"):
        read_csv_columns(bad, ["x", "y"])
    with pytest.raises(ConfigError, match="not found"):
        read_csv_columns(tmp_path / "nope.csv", ["x"])


def test_dump_toml_round_trips():
    cfg = {"a": {"x": 0.1 + 0.2, "n": 3, "s": 'he said "hi"', "flag": True, "v": [1.0, 2.5], "names": ["p", "q"]},
           "b": {"y": 1e-300, "bounds": {"contact.mu": [0.0, 1.0], "k": 2.0}}}  # an inline table, a dotted key
    assert tomllib.loads(dump_toml(cfg, header="hello\nworld")) == cfg
