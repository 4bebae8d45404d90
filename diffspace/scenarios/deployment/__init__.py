"""Deployment of a rigid-flexible rover mast with ANCF thin-shell interfaces (Liu, Wen & Zhang 2024): the
scenario (:mod:`.scenario`), the constrained mast model (:mod:`.model`), its generalized-alpha simulation
(:mod:`.simulation`) and the reports (:mod:`.report`)."""

from .model import Mast, MastParams, build_mast, reference_coordinates
from .scenario import LAWS, MODELS, Deployment, DeploymentParams, build_drive
from .simulation import Outcome, Settings, simulate_mast

__all__ = ["LAWS", "MODELS", "Deployment", "DeploymentParams", "Mast", "MastParams", "Outcome", "Settings",
           "build_drive", "build_mast", "reference_coordinates", "simulate_mast"]
