"""The multibody core every scenario builds on: status codes, small linear algebra, spatial algebra, the robot
model (a floating-base kinematic tree) and its dynamics (one kinematics pass; CRBA, RNEA and ABA kernels; frames,
Jacobians, momentum, base restrictions).

Nothing here imports the layers above (integrators, bodies, contact, scenarios, design, the command line).
"""
