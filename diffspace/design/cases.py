"""Cases: a scenario evaluated at assignments of config keys, batched in one compiled, vmapped function.

A *case* assigns values to config keys (``{"friction.viscous_N_m_s_rad": 5.0, "ejection.attitude": "a1"}``).
Keys that are design variables of the scenario (:meth:`~diffspace.scenarios.AbstractScenario.design_space`)
are applied inside the traced function by ``with_design`` (so they batch and differentiate); any other key
is applied to the raw config on the host and the scenario rebuilt with ``from_config`` (cached per distinct
value set). The scenarios of a batch are stacked leaf by leaf: their static structure must agree, else the
key changes the model's topology and the batch is refused with one line naming it.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Callable

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ..scenarios import AbstractScenario, resolve_config
from ..io.config import get_key, set_key
from ..core.status import ConfigError

class CaseBuilder:
    """Builds the scenario of each case from a raw config (host side), caching by the non-design values."""

    def __init__(self, raw: dict, base_dir: Path, design_keys: set[str]):
        self.raw = raw
        self.base_dir = base_dir
        self.design_keys = design_keys
        self._cache: dict[tuple, AbstractScenario | ConfigError] = {}

    def split(self, case: dict) -> tuple[tuple, dict]:
        """``(host-side assignments as a hashable tuple, design-variable values)``."""
        host = tuple(sorted((k, _hashable(v)) for k, v in case.items() if k not in self.design_keys))
        design = {k: v for k, v in case.items() if k in self.design_keys}
        return host, design

    def scenario(self, host: tuple) -> AbstractScenario | ConfigError:
        """The scenario with the host-side assignments applied (a ``ConfigError`` is returned, not raised)."""
        if host not in self._cache:
            raw = copy.deepcopy(self.raw)
            try:
                for key, value in host:
                    set_key(raw, key, _plain(value))
                cls, cfg = resolve_config(raw, self.base_dir)
                self._cache[host] = cls.from_config(cfg)
            except ConfigError as err:
                self._cache[host] = err
        return self._cache[host]

    def configured(self, scenario: AbstractScenario, keys: tuple[str, ...]) -> dict | None:
        """The values the config itself gives the design keys (defaults filled, names resolved by the
        config's ``scenario``), or ``None`` if a key has no single numeric value there."""
        _, cfg = resolve_config(copy.deepcopy(self.raw), self.base_dir)
        resolved = scenario.resolved_config(cfg)
        try:
            values = {key: get_key(resolved, key) for key in keys}
        except (KeyError, IndexError, TypeError):
            return None
        ok = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values.values())
        return {k: float(v) for k, v in values.items()} if ok else None


def _hashable(value):
    return tuple(_hashable(v) for v in value) if isinstance(value, (list, tuple)) else value


def _plain(value):
    return [_plain(v) for v in value] if isinstance(value, tuple) else value


def stack(scenarios: list[AbstractScenario], changed_keys: list[str]) -> AbstractScenario:
    """One scenario whose array leaves carry a leading batch axis; refuse structurally different scenarios."""
    dynamic, static = eqx.partition(scenarios[0], eqx.is_array)
    leaves, treedef = jax.tree_util.tree_flatten(dynamic)
    batches = [[leaf] for leaf in leaves]
    for other in scenarios[1:]:
        dyn_other, static_other = eqx.partition(other, eqx.is_array)
        other_leaves, other_def = jax.tree_util.tree_flatten(dyn_other)
        same_shapes = [np.shape(a) == np.shape(b) for a, b in zip(leaves, other_leaves)]
        if other_def != treedef or not all(same_shapes) or not eqx.tree_equal(static, static_other):
            keys = ", ".join(changed_keys) or "the config"
            raise ConfigError(
                f"{keys}: these values change the model's structure (topology, sizes or options), so the "
                "cases cannot run in one batch; sweep them in separate runs"
            )
        for batch, leaf in zip(batches, other_leaves):
            batch.append(leaf)
    stacked = [jnp.stack([jnp.asarray(x) for x in batch]) for batch in batches]
    return eqx.combine(jax.tree_util.tree_unflatten(treedef, stacked), static)


def broadcast(scenario: AbstractScenario, size: int) -> AbstractScenario:
    """The same scenario repeated along a leading batch axis (every case shares the model)."""
    dynamic, static = eqx.partition(scenario, eqx.is_array)
    dynamic = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (size,) + jnp.shape(x)), dynamic)
    return eqx.combine(dynamic, static)


def batched(fn: Callable) -> Callable:
    """``fn(scenario, design) -> pytree`` vmapped over a stacked scenario and design arrays, one compile per
    static structure."""

    @eqx.filter_jit
    def run(scenarios, design):
        return eqx.filter_vmap(fn)(scenarios, design)

    return run


def shard(tree, devices=None):
    """Place a batch with its leading axis split across all visible devices (no-op on one device)."""
    devices = jax.devices() if devices is None else devices
    if len(devices) == 1:
        return tree
    mesh = jax.sharding.Mesh(np.array(devices), ("batch",))

    def place(x):
        if not eqx.is_array(x) or np.ndim(x) == 0 or np.shape(x)[0] % len(devices):
            return x
        spec = jax.sharding.PartitionSpec("batch", *([None] * (np.ndim(x) - 1)))
        return jax.device_put(x, jax.sharding.NamedSharding(mesh, spec))

    return jax.tree_util.tree_map(place, tree)
