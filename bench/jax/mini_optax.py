"""optax.chain(optax.clip_by_global_norm(1.0), optax.adam(0.1)) for hosts where optax is not installed.

The same update equations, defaults and state layout (clip's empty state; adam as scale_by_adam's
(count, mu, nu) and scale_by_learning_rate's empty state), so the optimizer-state offloading
benchmark moves the same bytes as with optax itself. bench/jax/tutorial.py prefers optax.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple


class GradientTransformation(NamedTuple):
    init: Callable[[Any], Any]
    update: Callable[..., Any]


class EmptyState(NamedTuple):
    pass


class ScaleByAdamState(NamedTuple):
    count: Any
    mu: Any
    nu: Any


def clip_by_global_norm(max_norm: float) -> GradientTransformation:
    import jax
    import jax.numpy as jnp

    def update(updates, state, params=None):
        del params
        g_norm = jnp.sqrt(sum(jnp.sum(jnp.square(g)) for g in jax.tree.leaves(updates)))
        trigger = jnp.squeeze(g_norm < max_norm)
        clipped = jax.tree.map(lambda t: jax.lax.select(trigger, t, (t / g_norm.astype(t.dtype)) * max_norm), updates)
        return clipped, state

    return GradientTransformation(lambda params: EmptyState(), update)


def scale_by_adam(b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0) -> GradientTransformation:
    import jax
    import jax.numpy as jnp

    def init(params):
        zeros = jax.tree.map(jnp.zeros_like, params)
        return ScaleByAdamState(count=jnp.zeros([], jnp.int32), mu=zeros, nu=jax.tree.map(jnp.zeros_like, params))

    def update(updates, state, params=None):
        del params
        mu = jax.tree.map(lambda g, t: (1 - b1) * g + b1 * t, updates, state.mu)
        nu = jax.tree.map(lambda g, t: (1 - b2) * (g * g) + b2 * t, updates, state.nu)
        count = jnp.where(state.count < jnp.iinfo(jnp.int32).max, state.count + 1, jnp.iinfo(jnp.int32).max)
        mu_hat = jax.tree.map(lambda t: t / (1 - b1**count).astype(t.dtype), mu)
        nu_hat = jax.tree.map(lambda t: t / (1 - b2**count).astype(t.dtype), nu)
        new = jax.tree.map(lambda m, v: m / (jnp.sqrt(v + eps_root) + eps), mu_hat, nu_hat)
        return new, ScaleByAdamState(count=count, mu=mu, nu=nu)

    return GradientTransformation(init, update)


def scale_by_learning_rate(learning_rate: float) -> GradientTransformation:
    import jax

    def update(updates, state, params=None):
        del params
        return jax.tree.map(lambda g: -learning_rate * g, updates), state

    return GradientTransformation(lambda params: EmptyState(), update)


def chain(*transforms) -> GradientTransformation:
    def init(params):
        return tuple(t.init(params) for t in transforms)

    def update(updates, state, params=None):
        new_state = []
        for t, s in zip(transforms, state):
            updates, s = t.update(updates, s, params)
            new_state.append(s)
        return updates, tuple(new_state)

    return GradientTransformation(init, update)


def adam(learning_rate: float) -> GradientTransformation:
    return chain(scale_by_adam(), scale_by_learning_rate(learning_rate))


def apply_updates(params, updates):
    import jax

    return jax.tree.map(lambda p, u: (p + u).astype(p.dtype), params, updates)
