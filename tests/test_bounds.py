"""``log_likelihood_bounds`` and ``gaussian_log_likelihood_bounds`` bracket
the exact mean log-likelihood (enumerated by brute force on tiny models) over
several seeds, never return ``lower > upper``, and batch their reverse chains
without changing any row's numbers."""

import functools
import itertools
import warnings

import numpy as np
import pytest
from scipy.special import logsumexp

from sklearn_rbm._core.sklearn_compat import InvalidParameterError
from sklearn_rbm._partition import reverse_ais
from sklearn_rbm._rbm.layers import bernoulli, categorical, gaussian
from sklearn_rbm._rbm.layers.categorical import independent_site_fields
from sklearn_rbm._rbm.layers.relu import BernoulliHidden
from sklearn_rbm.likelihood import (
    LogPartition,
    base_rate_bias,
    gaussian_log_likelihood_bounds,
    log_likelihood_bounds,
)


def brute_log_p(X, W, b, c):
    """``log p(v)`` of each row by summing every joint state (independent of
    the package's free energy and enumeration)."""
    n_hidden, n_visible = W.shape
    V = np.array(list(itertools.product([0.0, 1.0], repeat=n_visible)))
    H = np.array(list(itertools.product([0.0, 1.0], repeat=n_hidden)))
    log_joint = H @ W @ V.T + (V @ b)[None, :] + (H @ c)[:, None]
    log_z = logsumexp(log_joint)
    log_joint_rows = H @ W @ X.T + (X @ b)[None, :] + (H @ c)[:, None]
    return logsumexp(log_joint_rows, axis=0) - log_z


def brute_gaussian_log_p(X, W, b, c, sigma):
    """``log p(v)`` of a Gaussian-Bernoulli RBM (energy ``sum (v - b)^2 /
    (2 sigma^2) - c^T h - (v / sigma^2)^T W^T h``): every hidden state, each
    visible integral in closed form."""
    n_hidden, n_visible = W.shape
    H = np.array(list(itertools.product([0.0, 1.0], repeat=n_hidden)))
    means = b + H @ W
    log_norm = np.sum(np.log(np.sqrt(2 * np.pi) * sigma))
    log_z = logsumexp(H @ c + ((means**2 - b**2) / (2 * sigma**2)).sum(1)) + log_norm
    energy = (
        ((X - b) ** 2 / (2 * sigma**2)).sum(1)[None, :]
        - (H @ c)[:, None]
        - H @ W @ (X / sigma**2).T
    )
    return logsumexp(-energy, axis=0) - log_z


def model_and_rows(seed, n_hidden=6, n_visible=8):
    """A tiny binary RBM, and rows it fits poorly (independent pixels with
    their own rates) scored with their own base rate: the case where RAISE
    from the data's base rate errs high."""
    rng = np.random.default_rng(seed)
    W = 1.5 * rng.standard_normal((n_hidden, n_visible))
    b, c = rng.standard_normal(n_visible), rng.standard_normal(n_hidden)
    X = (rng.random((30, n_visible)) < rng.random(n_visible)).astype(float)
    return W, b, c, X


def test_binary_bounds_bracket_the_exact_value_over_seeds():
    covered = 0
    for model_seed, seed in itertools.product(range(3), range(4)):
        W, b, c, X = model_and_rows(model_seed)
        exact = brute_log_p(X, W, b, c).mean()
        lower, upper = log_likelihood_bounds(
            X, W, b, c, base_rate=base_rate_bias(X), random_state=seed
        )
        assert lower <= upper
        covered += lower <= exact <= upper
        assert upper - lower < 0.3, (model_seed, seed, lower, exact, upper)
    assert covered == 12


def test_gaussian_bounds_bracket_the_exact_value_over_seeds():
    covered = 0
    for model_seed, seed in itertools.product(range(2), range(4)):
        rng = np.random.default_rng(model_seed)
        W = 0.6 * rng.standard_normal((6, 5))
        b, c = rng.standard_normal(5), rng.standard_normal(6)
        sigma = np.full(5, 0.8)
        X = 1.5 * rng.standard_normal((30, 5)) + 0.5  # not the model's rows
        exact = brute_gaussian_log_p(X, W, b, c, sigma).mean()
        lower, upper = gaussian_log_likelihood_bounds(
            X, W, b, c, sigma, base_mean=X.mean(0), base_sigma=X.std(0),
            random_state=seed,
        )  # fmt: skip
        assert lower <= upper
        covered += lower <= exact <= upper
        assert upper - lower < 0.3, (model_seed, seed, lower, exact, upper)
    assert covered == 8


def test_crossed_ends_double_the_temperatures_then_warn_and_never_cross():
    """A forward run that says ``log p = 0`` and a reverse run that says 5:
    the count is doubled four times, then a warning says what to increase and
    the span of the two comes back, ``lower <= upper``."""
    counts = []

    def forward(schedule):
        counts.append(schedule.size)
        return LogPartition(0.0, 0.0, 0.0, "ais"), None, np.zeros(3)

    def reverse(schedule, states, weights, seed):
        assert schedule.size == counts[-1] and schedule[-1] == 1.0
        return np.array([5.0, 5.0]), np.zeros(2)

    with pytest.warns(UserWarning, match=r"exceeds.*increase the temperatures "
                      r"\(betas=128000\) and n_chains"):  # fmt: skip
        bounds = reverse_ais._bracket(np.zeros(2), forward, reverse, 1000, 0)
    assert counts == [1000, 2000, 4000, 8000, 16000]
    assert bounds == (0.0, 5.0)
    # An explicit schedule is not adapted.
    counts.clear()
    with pytest.warns(UserWarning, match="more temperatures"):
        bounds = reverse_ais._bracket(
            np.zeros(2), forward, reverse, np.linspace(0, 1, 7), 0
        )
    assert counts == [7] and bounds.lower <= bounds.upper


def test_uneven_forward_weights_warn_about_the_infinite_upper_end():
    """The forward run alone is doubled while its band reaches 0 (the far
    costlier reverse chains keep their temperatures), then the warning says
    what to increase."""
    counts, reversed_at = [], []

    def forward(schedule):
        counts.append(schedule.size)
        return LogPartition(0.0, -np.inf, 1.0, "ais"), None, np.zeros(3)

    def reverse(schedule, states, weights, seed):
        reversed_at.append(schedule.size)
        return np.array([-1.0]), np.zeros(1)

    with pytest.warns(UserWarning, match="increase n_chains"):
        lower, upper = reverse_ais._bracket(np.zeros(1), forward, reverse, 10, 0)
    assert lower == -1.0 and upper == np.inf
    assert counts == [10, 20, 40, 80, 160] and reversed_at == [10]


def test_batched_reverse_chains_equal_row_by_row(monkeypatch):
    """Rows in one batch, in blocks of two rows, or alone: the same
    estimates and variances (to the rounding of the batched products), for
    both visible layers; the same seed gives the same bounds bit for bit."""
    W, b, c, X = model_and_rows(0)
    X = X[:7]
    base = base_rate_bias(X)
    schedule = np.linspace(0.0, 1.0, 40)
    rng = np.random.default_rng(1)
    R = rng.standard_normal((7, 8))
    sigma = np.full(8, 0.9)
    paths = {
        "binary": bernoulli.annealing_path(W, b, c, base),
        "gaussian": gaussian.annealing_path(
            0.3 * W, b, c, sigma, np.zeros(8), np.ones(8)
        ),
    }
    runs = {
        name: functools.partial(reverse_ais._raise_rows, path=path,
                                schedule=schedule, n_chains=5, seed=11)
        for name, path in paths.items()
    }  # fmt: skip
    for name, rows in (("binary", X), ("gaussian", R)):
        batch = runs[name](rows)
        alone = [runs[name](rows[i : i + 1]) for i in range(7)]
        for part in range(2):
            np.testing.assert_allclose(
                batch[part], np.concatenate([a[part] for a in alone]), rtol=1e-12
            )
        monkeypatch.setattr(reverse_ais, "_RAISE_ROWS", 10)  # blocks of 2 rows
        blocks = runs[name](rows)
        monkeypatch.undo()
        np.testing.assert_allclose(blocks[0], batch[0], rtol=1e-12)
    first = log_likelihood_bounds(X, W, b, c, betas=50, random_state=4)
    assert first == log_likelihood_bounds(X, W, b, c, betas=50, random_state=4)
    first = gaussian_log_likelihood_bounds(R, 0.3 * W, b, c, sigma, random_state=4)
    assert first == gaussian_log_likelihood_bounds(
        R, 0.3 * W, b, c, sigma, random_state=4
    )


def test_bounds_reject_bad_settings_clearly_and_keep_the_input():
    W, b, c, X = model_and_rows(0)
    kept = X.copy()
    for function, args in (
        (log_likelihood_bounds, (X, W, b, c)),
        (gaussian_log_likelihood_bounds, (X, W, b, c, 1.0)),
    ):
        with pytest.raises(InvalidParameterError, match="n_reverse_chains"):
            function(*args, n_reverse_chains=1)
        with pytest.raises(MemoryError, match="n_reverse_chains=1000000000000"):
            function(*args, n_reverse_chains=10**12)
        with pytest.raises(MemoryError, match="n_chains=1000000000000"):
            function(*args, n_chains=10**12)
        with pytest.raises(ValueError, match="Use fewer temperatures"):
            function(*args, betas=10**9)
        with pytest.raises(ValueError, match="increase strictly from 0 to 1"):
            function(*args, betas=[0.0, 0.5])
        with pytest.raises(InvalidParameterError, match="betas"):
            function(*args, betas=1.5)
    np.testing.assert_array_equal(X, kept)


def test_estimator_bounds_bracket_exact_on_digits():
    """A fitted 16-unit RBM on binarised digits, with its default settings:
    the bracket holds on held-out rows and the warning stays silent."""
    from sklearn_rbm import DCPBernoulliRBM
    from sklearn_rbm.datasets import load_binary_digits

    X, _ = load_binary_digits()
    rbm = DCPBernoulliRBM(n_components=16, n_iter=3, random_state=0).fit(X[:600])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lower, upper = rbm.log_likelihood_bounds(X[1500:1530])
    exact = rbm.score(X[1500:1530])
    assert lower <= exact <= upper and upper - lower < 0.2


def brute_categorical_log_p(X, W, b, c, n_states):
    """``log p(v)`` of a categorical-Bernoulli RBM by summing every joint
    state (one-hot codes of all ``q^L`` visible states, all hidden states)."""
    n_hidden, n_columns = W.shape
    n_sites = n_columns // n_states

    def one_hot(codes):
        codes = np.asarray(codes, dtype=int)
        return np.eye(n_states)[codes].reshape(codes.shape[0], n_columns)

    V = one_hot(list(itertools.product(range(n_states), repeat=n_sites)))
    H = np.array(list(itertools.product([0.0, 1.0], repeat=n_hidden)))
    log_z = logsumexp(H @ W @ V.T + (V @ b)[None, :] + (H @ c)[:, None])
    S = one_hot(X)
    log_joint_rows = H @ W @ S.T + (S @ b)[None, :] + (H @ c)[:, None]
    return logsumexp(log_joint_rows, axis=0) - log_z


def categorical_model_and_rows(seed, n_hidden=4, n_sites=4, n_states=3):
    """A tiny categorical RBM and rows from independent sites with their own
    frequencies (not the model's), with the independent-site model of the
    rows as the forward base."""
    rng = np.random.default_rng(seed)
    W = 1.2 * rng.standard_normal((n_hidden, n_sites * n_states))
    b, c = rng.standard_normal(n_sites * n_states), rng.standard_normal(n_hidden)
    frequencies = rng.dirichlet(np.ones(n_states), size=n_sites)
    X = np.array(
        [[rng.choice(n_states, p=f) for f in frequencies] for _ in range(30)],
        dtype=float,
    )
    return W, b, c, X, independent_site_fields(X, n_states)


def test_categorical_bounds_bracket_the_exact_value_over_seeds():
    for seed in range(10):
        W, b, c, X, fields = categorical_model_and_rows(seed)
        exact = brute_categorical_log_p(X, W, b, c, 3).mean()
        path = categorical.annealing_path(W, b, c, 3, BernoulliHidden(), fields)
        lower, upper = reverse_ais.likelihood_bounds(X, path, 100, 10, None, seed)
        assert lower <= exact <= upper, (seed, lower, exact, upper)
        assert upper - lower < 0.3, (seed, lower, exact, upper)


def test_categorical_rbm_bounds_bracket_its_exact_score_and_repeat():
    """Fitted CategoricalRBMs with binary and ReLU hidden units: the bracket
    holds the exact score (enumerated), the same fitted seed gives the same
    bounds bit for bit, and a row's reverse chains do not depend on the rows
    beside it."""
    from sklearn_rbm import CategoricalRBM

    _, _, _, X, _ = categorical_model_and_rows(0)
    X[:, 1] = (X[:, 0] + 1) % 3  # a coupling for the hidden units to learn
    for hidden_unit in ("bernoulli", "relu"):
        rbm = CategoricalRBM(
            n_components=3, n_states=3, hidden_unit=hidden_unit, n_iter=10,
            learning_rate=0.05, ais_betas=500, random_state=0,
        ).fit(X)  # fmt: skip
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            lower, upper = rbm.log_likelihood_bounds(X)
        assert lower <= rbm.score(X) <= upper, (hidden_unit, lower, upper)
        assert upper - lower < 0.3
        assert (lower, upper) == rbm.log_likelihood_bounds(X)
    path = rbm._visible_layer().annealing_path(rbm)
    schedule = np.linspace(0.0, 1.0, 30)
    batch = reverse_ais._raise_rows(X[:6], path, schedule, 4, 3)[0]
    alone = [reverse_ais._raise_rows(X[i : i + 1], path, schedule, 4, 3)[0]
             for i in range(6)]  # fmt: skip
    np.testing.assert_allclose(batch, np.concatenate(alone), rtol=1e-12)


def test_categorical_bounds_with_per_column_states_and_one_hot_rows():
    """Columns of 2, 3 and 4 states (padded to 4) and the same rows one-hot:
    the bracket holds the exact (enumerated) score, the padded states are
    never visited by the refitted base model, and one-hot rows give the
    bounds of their codes bit for bit."""
    from sklearn_rbm import CategoricalRBM

    rng = np.random.default_rng(1)
    n_states = [2, 3, 4, 3]
    X = np.column_stack([rng.integers(0, q, size=80) for q in n_states]).astype(float)
    X[:, 2] = (X[:, 1] + 1) % 3  # a coupling for the hidden units to learn
    settings = dict(n_components=3, n_states=n_states, n_iter=10,
                    learning_rate=0.05, ais_betas=500, random_state=0)  # fmt: skip
    rbm = CategoricalRBM(**settings).fit(X)
    lower, upper = rbm.log_likelihood_bounds(X)
    assert lower <= rbm.score(X) <= upper, (lower, rbm.score(X), upper)
    assert upper - lower < 0.3
    one_hot = np.hstack([np.eye(q)[X[:, i].astype(int)]
                         for i, q in enumerate(n_states)])  # fmt: skip
    rbm_one_hot = CategoricalRBM(one_hot=True, **settings).fit(one_hot)
    assert rbm_one_hot.log_likelihood_bounds(one_hot) == (lower, upper)


def test_categorical_bounds_on_protein_sized_rows():
    """Smoke test at the width of a protein family (53 sites, 21 states)."""
    from sklearn_rbm import CategoricalRBM

    rng = np.random.default_rng(0)
    X = rng.integers(0, 21, size=(60, 53)).astype(float)
    rbm = CategoricalRBM(
        n_components=8, n_states=21, n_iter=2, ais_n_chains=20, ais_betas=50,
        random_state=0,
    ).fit(X)  # fmt: skip
    lower, upper = rbm.log_likelihood_bounds(X[:10])
    assert np.isfinite(lower) and np.isfinite(upper) and lower <= upper
    with pytest.raises(ValueError, match="21"):
        rbm.log_likelihood_bounds(np.full((2, 53), 21.0))
