"""The deploying mast (diffspace.scenarios.deployment) against an independent model (experiments/references/mast_reference.py:
rigid cube modules and segmented Timoshenko tubes in Pinocchio, integrated by SciPy's Radau).

* First natural frequency (drive locked). The chain converges to the Timoshenko closed form as 1/N^2 and
  equals diffspace's beam interface to 1e-4; diffspace's shell at the configs' 8x2 mesh is 1.4 % (scheme 1)
  and 1.6 % (scheme 3) stiffer, refined shells 0.4-0.8 %. Shear matters for the short tube: Euler-Bernoulli
  is 6.0 % high in scheme 1 (1.0 % in scheme 3, whose first mode is mostly the interfaces' rotation).
* Residual vibration after the trapezoidal 90 deg / 6.1 s drive. The chain agrees with diffspace's beam
  within 2 % (diffspace's 2.5 ms generalized-alpha step). In scheme 3 the shell is 20-23 % above the
  Timoshenko chain only because of its 1.6 % higher frequency: 29 % of the start transient survives the 6 s
  move (zeta = 1.6 %), so the stop transient adds to it with a phase that shifts 1.25 rad per 1.6 % of
  frequency; with its springs scaled to the shell's frequency the chain agrees with the shell within 2 %.
Numbers: experiments/results/deployment_reference/ (python experiments/deployment_reference.py).
"""

from dataclasses import replace

import numpy as np
import pytest
import scipy.linalg

from diffspace.io.packaged import DATA_DIR
from experiments.references.mast_reference import (
    MastDynamics,
    MastSpec,
    TrapezoidDrive,
    diffspace_deployment,
    diffspace_frequencies,
    natural_frequencies,
    with_frequency,
)

CONFIGS = {1: DATA_DIR / "deployment_scheme1.toml", 3: DATA_DIR / "deployment_scheme3.toml"}
BEAM = ['interface.model="beam"']
CELLS = 4  # tube cells of the time runs (first frequency within 0.02 % of the converged chain)


def converged_frequency(spec: MastSpec) -> float:
    """First frequency of the chain, Richardson-extrapolated from 8 and 16 cells (O(1/N^2))."""
    f8, f16 = (natural_frequencies(spec, n, 1)[0] for n in (8, 16))
    return f16 + (f16 - f8) / 3.0


def test_chain_converges_to_the_timoshenko_closed_form():
    """Scheme 1 with a (nearly) massless tube is a 2-DOF system: module 1 on the clamped-free Timoshenko tip
    compliance [[L^3/3EI + L/kGA, L^2/2EI], [L^2/2EI, L/EI]] (module centre a/2 beyond the face). The chain's
    first two frequencies converge to it as 1/N^2 (error ratios 4 +- 0.2 from 2 to 16 cells, measured
    4.01-4.10; 16 cells within 1e-4 and 5e-4, measured 4.3e-5 and 2.8e-4)."""
    spec = replace(MastSpec(2), density=1.0)  # 1e-3 of the tube's density: its mass is 1e-6 of a module's
    length, ei, kga = spec.length, spec.bending_rigidity, spec.shear_rigidity
    compliance = np.array([[length**3 / (3 * ei) + length / kga, length**2 / (2 * ei)],
                           [length**2 / (2 * ei), length / ei]])
    mass, edge = spec.module_density * spec.edge**3, spec.edge
    inertia = np.array([[mass, mass * edge / 2], [mass * edge / 2, mass * edge**2 / 4 + mass * edge**2 / 6]])
    exact = np.sqrt(scipy.linalg.eigh(np.linalg.inv(compliance), inertia, eigvals_only=True)) / (2 * np.pi)
    errors = np.array([natural_frequencies(spec, n, 2) / exact - 1.0 for n in (2, 4, 8, 16)])
    np.testing.assert_allclose(errors[:-1] / errors[1:], 4.0, rtol=0.05)
    assert np.all(np.abs(errors[-1]) < [1e-4, 5e-4]), errors[-1]


def test_drive_law_is_the_configured_trapezoid():
    """The independent trapezoid (15 deg/s cruise, 0.1 s ramps) equals diffspace's configured drive law in
    angle, rate and acceleration (1e-12) away from the acceleration jumps."""
    from diffspace.scenarios import load_scenario

    drive = load_scenario(CONFIGS[1]).params.drive
    ours = TrapezoidDrive()
    for t in (0.03, 0.07, 1.0, 3.3, 6.02, 6.09, 7.0):
        theirs = (*map(float, drive.state(t)), float(drive.acceleration(t)))
        np.testing.assert_allclose(ours(t), theirs, rtol=1e-12, atol=1e-12)


def test_first_frequency_scheme1():
    """Scheme 1 (drive locked): the converged chain (11.569 Hz) equals diffspace's beam interface within 1e-4
    (measured 7e-5: its tube mass sits in rings at the faces); diffspace's shell at the configs' mesh is a
    degenerate bending pair 0-2 % above it (measured +1.35 %), much closer to Timoshenko than to
    Euler-Bernoulli (+6.0 %: the 105 mm tube of 88 mm diameter is short, shear matters)."""
    timoshenko = converged_frequency(MastSpec(2))
    euler = natural_frequencies(replace(MastSpec(2), shear=False), 16, 1)[0]
    beam = diffspace_frequencies(CONFIGS[1], BEAM, 1)[0]
    shell = diffspace_frequencies(CONFIGS[1], (), 2)
    assert beam / timoshenko - 1.0 == pytest.approx(0.0, abs=1e-4)
    assert shell[1] == pytest.approx(shell[0], rel=1e-6)
    assert 0.0 < shell[0] / timoshenko - 1.0 < 0.02
    assert euler / timoshenko - 1.0 > 3.0 * (shell[0] / timoshenko - 1.0)


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_first_frequency_scheme3_and_refined_shells():
    """Scheme 3: the converged chain (2.039 Hz) equals diffspace's beam within 1e-4 and its shell at the
    configs' mesh is 0-2 % above (measured +1.63 %); refining the shell to 8x8 and 16x8 elements brings it
    within 1 % of Timoshenko in both schemes (measured +0.67/+0.77 % scheme 3, +0.35/+0.46 % scheme 1): what
    remains is the rigid end rings' restraint of the wall, bounded by the Timoshenko frequency with the
    plane-strain modulus E / (1 - nu^2) (+6.7 %)."""
    timoshenko = converged_frequency(MastSpec(4))
    assert diffspace_frequencies(CONFIGS[3], BEAM, 1)[0] / timoshenko - 1.0 == pytest.approx(0.0, abs=1e-4)
    assert 0.0 < diffspace_frequencies(CONFIGS[3], (), 1)[0] / timoshenko - 1.0 < 0.02
    for scheme in (1, 3):
        reference = converged_frequency(MastSpec(scheme + 1))
        for mesh in ((8, 8), (16, 8)):
            overrides = [f"mesh.n_circumferential={mesh[0]}", f"mesh.n_axial={mesh[1]}"]
            assert 0.0 < diffspace_frequencies(CONFIGS[scheme], overrides, 1)[0] / reference - 1.0 < 0.01
    upper = natural_frequencies(replace(MastSpec(2), stiffness_scale=1.0 / (1.0 - 0.35**2)), 16, 1)[0]
    assert upper / converged_frequency(MastSpec(2)) - 1.0 > 0.05


def residual_comparison(scheme: int) -> dict:
    """Residual-vibration metrics of diffspace (shell at the configs' mesh, beam) and of the chain (as is and
    scaled to the shell's first frequency), all on diffspace's 2.5 ms samples."""
    shell, shell_summary = diffspace_deployment(CONFIGS[scheme])
    beam, _ = diffspace_deployment(CONFIGS[scheme], BEAM)
    assert shell_summary["status"] in ("ok", "not_settled")
    spec = MastSpec(scheme + 1)
    matched = with_frequency(spec, CELLS, diffspace_frequencies(CONFIGS[scheme], (), 1)[0])
    ours = {label: MastDynamics(s, CELLS, TrapezoidDrive()).simulate(shell.t).residual_vibration()
            for label, s in (("timoshenko", spec), ("matched", matched))}
    return {"shell": shell.residual_vibration(), "beam": beam.residual_vibration(), **ours}


def assert_close(ours: dict, theirs: dict, vibration: float, torque: float):
    for key, value in ours.items():
        tol = torque if key == "peak_joint_torque_N_m" else vibration
        assert value == pytest.approx(theirs[key], rel=tol), (key, value, theirs[key])


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("scheme", [1, 3])
def test_residual_vibration(scheme):
    """Peak and RMS of the end module's angular acceleration after the motion and the peak drive torque.
    Chain vs diffspace's beam: within 2.5 % and 1 % (measured scheme 1: +1.8/-1.4/+0.07 %, scheme 3:
    -1.0/-0.6/-0.6 %; diffspace's beam at a 0.5 ms step comes within 0.5 %: its 2.5 ms step). Chain at the
    shell's frequency vs the shell: the same tolerances (measured -1.2/+1.6/-0.1 % and +0.8/+0.2/+0.1 %).
    Scheme 3's unmatched chain is 20-23 % below the shell (the phase of the surviving start transient)."""
    r = residual_comparison(scheme)
    assert_close(r["beam"], r["timoshenko"], 0.025, 0.01)
    assert_close(r["matched"], r["shell"], 0.025, 0.01)
    if scheme == 3:
        for key in ("residual_vibration_peak_deg_s2", "residual_vibration_rms_deg_s2", "peak_joint_torque_N_m"):
            assert r["timoshenko"][key] < 0.85 * r["shell"][key], key
