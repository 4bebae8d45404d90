"""Free-floating manipulator with a flexible link: maximal-coordinate quaternion model with Baumgarte
and momentum constraints and an assumed-mode last link, against the rigid arm in minimal coordinates."""

from .outcome import FlexibleArmOutcome
from .scenario import FlexibleArm, FlexibleArmParams

__all__ = ["FlexibleArm", "FlexibleArmOutcome", "FlexibleArmParams"]
