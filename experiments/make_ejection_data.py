"""Synthetic ejection test data: ten attitudes ejected with known friction, plus measurement noise.

The five named attitudes of the reference arm and five random in-plane ones (joints 2, 4, 6 within +-90
deg) are ejected on the air table with B = 5.4 N m s/rad and Coulomb 2.0 N m (the paper's values).
Writes ``experiments/data/ejection_synthetic.csv``: joint angles, separation velocity (noise 1 mm/s),
stable angular rate (0.1 deg/s) and the free joints' final angle changes (encoders, 0.05 deg).
``diffspace fit configs/ejection_fit.toml --data experiments/data/ejection_synthetic.csv`` should recover them.
"""

from pathlib import Path

import equinox as eqx
import jax
import numpy as np

from diffspace.scenarios import load_scenario

ROOT = Path(__file__).resolve().parent.parent
VELOCITY_STD, RATE_STD, ANGLE_STD = 1e-3, 0.1, 0.05


def main(seed: int = 7) -> Path:
    case = load_scenario(ROOT / "configs" / "ejection_plane.toml", ["friction.viscous_N_m_s_rad=5.4",
                                                                     "friction.coulomb_N_m=2.0"])
    rng = np.random.default_rng(seed)
    n = case.robot.n_joints
    free = case.free
    header = [f"q{j + 1}_deg" for j in range(n)] + ["separation_velocity_m_s", "stable_angular_velocity_deg_s"]
    rows = [",".join(header + [f"joint{j + 1}_change_final_deg" for j in free])]
    attitudes = [np.asarray(a) for _, a in case.robot.attitudes]
    for _ in range(5):
        random = np.zeros(n)
        random[free] = rng.uniform(-np.pi / 2, np.pi / 2, len(free))
        attitudes.append(random)
    run = jax.jit(lambda a: case.simulate(eqx.tree_at(lambda p: p.attitude, case.params, a)))
    for angles in attitudes:
        result = run(angles)
        velocity = float(result.separation_velocity) + rng.normal(0, VELOCITY_STD)
        rate = float(np.rad2deg(np.linalg.norm(result.stable_angular_velocity))) + rng.normal(0, RATE_STD)
        changes = np.rad2deg(np.asarray(result.joint_change_final)) + rng.normal(0, ANGLE_STD, len(free))
        cells = [f"{x:.6f}" for x in np.rad2deg(angles)] + [f"{velocity:.6f}", f"{rate:.4f}"] + [f"{c:.4f}" for c in changes]
        rows.append(",".join(cells))
    path = ROOT / "experiments" / "data" / "ejection_synthetic.csv"
    path.write_text("\n".join(rows) + "\n")
    print(path.read_text())
    return path


if __name__ == "__main__":
    main()
