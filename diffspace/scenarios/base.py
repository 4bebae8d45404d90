r"""The scenario protocol: what every scenario implements, and all that ``run``/``sweep``/``optimize``/``fit``
(``diffspace.design``) and the command line need from it.

A scenario is a final ``equinox.Module`` subclassing [`AbstractScenario`][diffspace.scenarios.base.AbstractScenario] (Equinox's abstract/final
pattern). Its fields are the model (static topology as static fields, physical parameters as arrays) and
``params``, the scenario's own [`AbstractParams`][diffspace.scenarios.parameter.AbstractParams] Module built from the config. Host-side methods
(``schema``, ``from_config``, ``summary``, ``write``, ``scene``, ``design_space``, ``read_data``) run in Python; the
pure ones (``simulate``, ``metrics``, ``with_design``) are JAX functions usable under ``jit``, ``vmap`` and
``grad``:

```python
scenario = Ejection.from_config(cfg)          # cfg validated against Ejection.schema()
outcome = jax.jit(Ejection.simulate)(scenario, scenario.params)
summary = scenario.summary(outcome)           # dict, SI, unit-suffixed keys
scenario.write(outcome, out)                  # time series + plots (summary.json: the design layer)
```

Design variables are named by their **config key** (``"friction.viscous_N_m_s_rad"``,
``"ejection.attitude[2]"``) in **config units**: ``design_space()`` lists the ones a scenario exposes with
bounds and units, ``with_design(params, {key: value})`` writes values into a params Module (converting
units), and ``metrics(params)`` returns the scalars a design loop works on. The same keys serve sweep axes
(traced, so sweeps can return gradients), optimisation variables and fitted parameters, and ``fit`` writes
the identified values back under those keys (a runnable ``fitted.toml``).

Status: every outcome has ``status`` (a ``diffspace.core.status.Status`` code) and ``metrics`` returns it under the
key ``"status"``. A metric that is undefined for a valid run (the stable velocity of an arm that never
stopped slipping) is NaN; a consumer uses a metric only where the status is not a failure and the value is
finite, and counts the runs it excluded.
"""

from __future__ import annotations

import abc
import copy
import dataclasses
import typing
from pathlib import Path
from typing import ClassVar

import equinox as eqx
import numpy as np
from jaxtyping import Array

from ..integrate.adjoint import adjoint_for
from ..io.config import Field, Schema, get_key, set_key, split_indexed
from ..core.status import ConfigError, describe, failed
from . import declare
from .parameter import AbstractParams, Parameter


class AbstractOutcome(eqx.Module):
    """Base of every scenario's outcome Module. Every outcome has a field ``status: Int[Array, ""]`` holding a
    ``diffspace.core.status.Status`` code. (Declared by each subclass, not here: an inherited field would
    come first in the constructor's positional order.)"""


@dataclasses.dataclass(frozen=True)
class FitData:
    """Measured data for identification: one row per experiment.

    Attributes:
        conditions: Config key -> values per row (what was set in each experiment, applied by ``with_design``),
            config units.
        measured: Metric name -> measured values per row (the metric's unit).
        sigma: Metric name -> the scale dividing each residual per row (the metric's unit).
        absolute_sigma: The scales are measurement standard deviations (the covariance is not rescaled);
            ``False`` for plain scales (e.g. the measured values, giving relative residuals), where the
            covariance is scaled by the residual variance.
    """

    conditions: dict[str, np.ndarray]
    measured: dict[str, np.ndarray]
    sigma: dict[str, np.ndarray]
    absolute_sigma: bool = True

    @property
    def rows(self) -> int:
        """Number of experiments."""
        return len(next(iter(self.measured.values())))


class AbstractScenario(eqx.Module):
    """A simulated system with a config schema, a pure simulation and host-side reports.

    Subclasses set ``name`` (the config section that selects the scenario) and ``params`` (a field of their
    params Module type: its declared leaves give the config schema's numeric keys, their values and the design
    variables, [`declare`][diffspace.scenarios.declare]) and implement the abstract methods; a subclass missing one
    cannot be instantiated. ``config_fields`` adds the keys that are not params (robot, modes, solver
    settings); ``design_space``/``with_design``/``metrics`` enable ``sweep``/``optimize``, ``read_data``
    enables ``fit``. ``differentiation`` (keyword, static; ``"reverse"`` or ``"forward"``) selects how every
    solve of ``simulate`` is differentiated ([`diffspace.integrate.adjoint`][diffspace.integrate.adjoint]).
    """

    name: eqx.AbstractClassVar[str]
    params: eqx.AbstractVar[AbstractParams]  # the config's parameters, a field of the subclass (which controls
    # the constructor's field order)
    differentiation: str = eqx.field(static=True, default="reverse", kw_only=True)  # of every solve: "reverse" |
    # "forward" (``integrate.adjoint``); set by ``differentiated_by``
    headline: ClassVar[tuple[str, str] | None] = None  # (metric, design key): the result whose gradient the
    # benchmark compiles and the generic gradient test checks against central differences
    outcomes: ClassVar[tuple[str, ...]] = ()  # the physical outcomes a valid run ends in (labels); the outcome
    # of such a scenario carries ``outcome`` (an index into them) and its metrics an ``"outcome"`` entry

    # ------------------------------------------------------------------ host side: config
    @classmethod
    def params_type(cls) -> type[AbstractParams]:
        """The class of the scenario's ``params`` field."""
        return typing.get_type_hints(cls)["params"]

    @classmethod
    def config_fields(cls) -> dict[str, dict[str, Field]]:
        """The config keys that are not declared params leaves (robot, model choices, solver settings):
        ``{section: {name: Field}}``; none by default."""
        return {}

    @classmethod
    def schema(cls) -> Schema:
        """Config schema: ``config_fields`` and, section by section after them, the keys the params declare."""
        sections = {section: dict(fields) for section, fields in cls.config_fields().items()}
        for section, fields in declare.schema_sections(cls.params_type()).items():
            sections.setdefault(section, {}).update(fields)
        return Schema(sections)

    @classmethod
    @abc.abstractmethod
    def from_config(cls, cfg: dict) -> "AbstractScenario":
        """Build the scenario from a validated config.

        Args:
            cfg: The config validated against ``schema()`` (defaults filled, paths resolved).

        Returns:
            The scenario, its ``params`` built from the config.

        Raises:
            ConfigError: A combination of values the schema cannot check.
        """

    # ------------------------------------------------------------------ pure
    @property
    def adjoint(self):
        """The ``adjoint`` every solve of ``simulate`` passes to Diffrax (from ``differentiation``)."""
        return adjoint_for(self.differentiation)

    def differentiated_by(self, differentiation: str) -> "AbstractScenario":
        """This scenario with its solves differentiated in another mode.

        Args:
            differentiation: ``"reverse"`` or ``"forward"``.

        Returns:
            A copy of the scenario.
        """
        return dataclasses.replace(self, differentiation=differentiation)

    @abc.abstractmethod
    def simulate(self, params: AbstractParams) -> AbstractOutcome:
        """One simulation; pure (jit/vmap/grad).

        Args:
            params: The parameters to simulate (usually ``self.params`` or a design-modified copy).

        Returns:
            The scenario's outcome, with its ``status``.
        """

    def with_design(self, params: AbstractParams, values: dict[str, Array]) -> AbstractParams:
        """``params`` with design variables replaced; pure. Generic: each key's
        [`Parameter`][diffspace.scenarios.parameter.Parameter] says which leaf it sets and how its unit converts.

        Args:
            params: The parameters to modify.
            values: Config key -> value, config units (may be traced).

        Returns:
            The modified copy of ``params``.

        Raises:
            ConfigError: A key is not a design variable of the scenario.
        """
        for key, value in values.items():
            params = self.parameter(key).write(params, value)
        return params

    def metrics(self, params: AbstractParams) -> dict[str, Array]:
        """Scalars for design work; pure.

        Args:
            params: The parameters to simulate.

        Returns:
            Metric name (SI, unit-suffixed) -> scalar, plus ``"status"`` and, for a scenario that declares
            ``outcomes``, ``"outcome"`` (an index into them). A metric that the run's outcome leaves undefined
            (the peak force of a miss) is NaN.

        Raises:
            ConfigError: The scenario defines no design metrics.
        """
        raise ConfigError(f"scenario '{self.name}' defines no design metrics")

    def metrics_names(self) -> list[str]:
        """Names of the metrics (without ``status`` and ``outcome``), from their shapes (nothing is computed)."""
        import jax

        shapes = jax.eval_shape(lambda s: s.metrics(s.params), self)
        return [k for k in shapes if k not in ("status", "outcome")]

    def outcome_label(self, outcome: AbstractOutcome) -> str | None:
        """The physical outcome of a run, one of ``outcomes``; ``None`` for a scenario that declares none or a
        failed run (host side)."""
        if not self.outcomes or bool(failed(int(outcome.status))):
            return None
        return self.outcomes[int(outcome.outcome)]

    # ------------------------------------------------------------------ host side: reports and design
    @abc.abstractmethod
    def summary(self, outcome: AbstractOutcome) -> dict:
        """JSON-ready scalars of one outcome (host side).

        Args:
            outcome: The outcome of ``simulate``.

        Returns:
            Unit-suffixed key -> value (SI units), including ``status``.
        """

    @abc.abstractmethod
    def write(self, outcome: AbstractOutcome, out: Path) -> None:
        """Write the time series and PNG plots of one outcome (the design layer writes ``summary.json``).

        Args:
            outcome: The outcome of ``simulate``.
            out: The results directory.
        """

    def scene(self, outcome: AbstractOutcome):
        """The outcome's 3-D scene (a ``diffspace.io.scene.Scene``) at sampled saved times, for the report;
        ``None`` for a scenario without one (host side). By default the ``scene(scenario, outcome)`` function
        of the scenario package's ``scene`` module, built from the outcome's time series and the core's
        kinematics."""
        import importlib

        package = type(self).__module__.rsplit(".", 1)[0]
        try:
            module = importlib.import_module(package + ".scene")
        except ModuleNotFoundError as err:
            if err.name != package + ".scene":
                raise
            return None
        return module.scene(self, outcome)

    def diagnose(self, outcome: AbstractOutcome) -> str:
        """One line saying what went wrong in a failed outcome, naming the phase (host side)."""
        return describe(int(outcome.status))

    def design_values(self, params: AbstractParams | None = None) -> dict[str, float]:
        """Every design variable's value in ``params`` (default: the config's), in config units (host side)."""
        params = self.params if params is None else params
        out = {}
        for p in self.design_space():
            value = np.asarray(p.read(params))
            out[p.key] = int(value) if p.integer else float(value)
        return out

    def resolved_config(self, cfg: dict) -> dict:
        """The validated ``cfg`` with every design variable's value written under its key (named values such
        as a named attitude become the numbers they stand for), so a derived config can set one element of a
        list (host side)."""
        out = copy.deepcopy(cfg)
        values = self.design_values()
        sizes: dict[str, int] = {}
        for key in values:
            dotted, index = split_indexed(key)
            if index is not None:
                sizes[dotted] = max(sizes.get(dotted, 0), index + 1)
        for dotted, size in sizes.items():
            try:
                current = get_key(out, dotted)
            except KeyError:
                current = None
            if not isinstance(current, list) or len(current) != size:
                set_key(out, dotted, [None] * size)
        for key, value in values.items():
            set_key(out, key, value)
        return out

    def design_space(self) -> tuple[Parameter, ...]:
        """The design variables this scenario exposes (config keys with bounds and units): by default those its
        params declare with a design range."""
        return declare.design_parameters(self.params_type())

    def read_data(self, path: Path) -> FitData:
        """Measured data for ``fit``.

        Args:
            path: The CSV file.

        Returns:
            One row per experiment.

        Raises:
            ConfigError: Bad data (naming file, row and column), or the scenario has no data format.
        """
        raise ConfigError(f"scenario '{self.name}' has no measured-data format: 'fit' is not available")

    def parameter(self, key: str) -> Parameter:
        """The design variable named ``key``.

        Raises:
            ConfigError: ``key`` is not a design variable (the message lists the known keys).
        """
        for p in self.design_space():
            if p.key == key:
                return p
        known = ", ".join(p.key for p in self.design_space()) or "none"
        raise ConfigError(f"{key}: not a design variable of scenario '{self.name}' (known: {known})")
