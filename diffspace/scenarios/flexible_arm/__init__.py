"""Free-floating manipulator with a flexible link (issue 13): maximal-coordinate quaternion model with Baumgarte
and momentum constraints and an assumed-mode last link, against the rigid arm in minimal coordinates."""

from .scenario import FlexibleArm, FlexibleArmOutcome, FlexibleArmParams

__all__ = ["FlexibleArm", "FlexibleArmOutcome", "FlexibleArmParams"]
