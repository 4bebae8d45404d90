"""Deployment of a rigid-flexible rover mast with ANCF thin-shell interfaces (issue 11; SPEC 5.3)."""
