"""Synthetic ejection test data: the five attitudes ejected with known friction, plus measurement noise.

Writes ``experiments/data/ejection_synthetic.csv`` (attitude, separation velocity, stable angular rate) from
B = 5.4 N m s/rad and Coulomb 2.0 N m (the paper's values) with Gaussian noise of 1 mm/s and 0.1 deg/s.
``diffspace fit configs/ejection_fit.toml --data experiments/data/ejection_synthetic.csv`` should recover them.
"""

from pathlib import Path

import jax
import numpy as np

from diffspace.cli import load_scenario
from diffspace.scenarios.ejection_study import case_from_config, evaluate

ROOT = Path(__file__).resolve().parent.parent
VELOCITY_STD, RATE_STD = 1e-3, 0.1


def main(seed: int = 7) -> Path:
    _, cfg = load_scenario(ROOT / "configs" / "ejection_plane.toml", ["friction.viscous_N_m_s_rad=5.4", "friction.coulomb_N_m=2.0"])
    case = case_from_config(cfg)
    rng = np.random.default_rng(seed)
    rows = ["attitude,separation_velocity_m_s,stable_angular_velocity_deg_s"]
    run = jax.jit(lambda a: evaluate(case, a, case.params)[0])
    for name, angles in case.robot.attitudes:
        result = run(np.asarray(angles))
        velocity = float(result.separation_velocity) + rng.normal(0, VELOCITY_STD)
        rate = float(np.rad2deg(np.linalg.norm(result.stable_angular_velocity))) + rng.normal(0, RATE_STD)
        rows.append(f"{name},{velocity:.6f},{rate:.4f}")
    path = ROOT / "experiments" / "data" / "ejection_synthetic.csv"
    path.write_text("\n".join(rows) + "\n")
    print(path.read_text())
    return path


if __name__ == "__main__":
    main()
