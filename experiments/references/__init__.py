"""Independent reference models: the mechanisms of the scenarios written again from their equations with other
tools (Pinocchio, MuJoCo, SciPy's integrators and BVP solver, NumPy), sharing no code with diffspace beyond the
robot files and the config values. Each module's reference imports nothing from diffspace; a comparison helper
at its end reads diffspace's numbers through the public API (``load_scenario`` and the scenario's methods).

Used by the tests (``tests/test_*_reference.py``) and by the experiments that tabulate the agreement.
"""
