"""PottsBoltzmannMachine, the generative checks and the mutation effects,
against brute-force enumeration of tiny models and against independent
numpy computations."""

import itertools
import pickle
import warnings

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.exceptions import ConvergenceWarning

from sklearn_rbm import CategoricalRBM, PottsBoltzmannMachine, PottsPseudoLikelihood
from sklearn_rbm._potts.boltzmann import log_likelihood_gradient
from sklearn_rbm._potts.chains import gibbs_sweeps
from sklearn_rbm.sequences import (
    compare_correlations,
    connected_correlations,
    frequencies,
    parse_mutations,
)

L, Q = 4, 3


def _states(n_sites, n_states):
    return np.array(list(itertools.product(range(n_states), repeat=n_sites)))


def _energies(S, h, J):
    L = S.shape[1]
    e = h[np.arange(L), S].sum(axis=1)
    for i in range(L):
        for j in range(i + 1, L):
            e = e + J[i, j, S[:, i], S[:, j]]
    return e


def _exact_marginals(h, J):
    """``(log Z, p1, p2)`` of the Potts model by enumeration."""
    S = _states(*h.shape)
    e = _energies(S, h, J)
    log_z = np.logaddexp.reduce(e)
    p = np.exp(e - log_z)
    n_sites, q = h.shape
    onehot = np.zeros((S.shape[0], n_sites, q))
    onehot[np.arange(S.shape[0])[:, None], np.arange(n_sites), S] = 1.0
    p1 = np.einsum("s,sia->ia", p, onehot)
    p2 = np.einsum("s,sia,sjb->ijab", p, onehot, onehot)
    return log_z, p1, p2


def _random_model(seed, scale=0.6):
    rng = np.random.default_rng(seed)
    h = rng.normal(size=(L, Q))
    J = np.zeros((L, L, Q, Q))
    for i in range(L):
        for j in range(i + 1, L):
            J[i, j] = scale * rng.normal(size=(Q, Q))
            J[j, i] = J[i, j].T
    return h, J


def _data(seed=0, n=3000):
    """Rows drawn exactly from a random tiny Potts model."""
    h, J = _random_model(seed)
    S = _states(L, Q)
    e = _energies(S, h, J)
    p = np.exp(e - e.max())
    rng = np.random.default_rng(seed + 1)
    return S[rng.choice(S.shape[0], size=n, p=p / p.sum())].astype(np.uint8)


def _fit(X, **settings):
    settings = {
        "n_chains": 8000, "learning_rate": 0.03, "target_pearson": 1.0,
        "max_iter": 400, "random_state": 0, **settings,
    }  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return PottsBoltzmannMachine(n_states=Q, **settings).fit(X)


def test_fit_matches_data_marginals_exactly():
    """At the maximum of the likelihood the model's one- and two-site
    marginals (by enumeration) equal the data's (with the pseudocount), up
    to the chains' noise (about sqrt(f / n_chains) = 0.005 here)."""
    X = _data()
    bm = _fit(X)
    f1, f2 = frequencies(X, n_states=Q, pseudocount=1.0 / X.shape[0])
    _, p1, p2 = _exact_marginals(bm.intercept_, bm.coupling_)
    assert np.max(np.abs(p1 - f1)) < 0.01
    assert np.max(np.abs(p2 - f2)) < 0.01
    # Not trivially: the independent-site start misses them by far more.
    log_f = np.log(f1)
    _, q1, q2 = _exact_marginals(log_f, np.zeros_like(bm.coupling_))
    assert np.max(np.abs(q2 - f2)) > 0.05


def _penalised_mle(f1, f2, l2):
    """The exact maximiser of ``sum f1 h + sum_{i<j} f2 J - log Z - l2
    sum_{i<j} ||J_ij||^2`` by L-BFGS over enumerated states."""
    rows, cols = np.triu_indices(L, k=1)

    def unpack(theta):
        h = theta[: L * Q].reshape(L, Q)
        J = np.zeros((L, L, Q, Q))
        J[rows, cols] = theta[L * Q :].reshape(-1, Q, Q)
        J[cols, rows] = J[rows, cols].transpose(0, 2, 1)
        return h, J

    def objective(theta):
        h, J = unpack(theta)
        log_z, p1, p2 = _exact_marginals(h, J)
        blocks = J[rows, cols]
        value = -(np.sum(f1 * h) + np.sum(f2[rows, cols] * blocks) - log_z)
        value += l2 * np.sum(blocks**2)
        grad = np.concatenate(
            [-(f1 - p1).ravel(), (-(f2 - p2)[rows, cols] + 2 * l2 * blocks).ravel()]
        )
        return value, grad

    size = L * Q + rows.size * Q * Q
    result = minimize(objective, np.zeros(size), jac=True, method="L-BFGS-B",
                      options={"maxiter": 5000, "gtol": 1e-10})  # fmt: skip
    return unpack(result.x)


def test_penalised_fit_matches_exact_penalised_mle():
    """With an L2 penalty on the couplings the fit's zero-sum couplings (the
    penalised optimum is zero-sum itself: moving a row mean into the fields
    only adds penalty) equal the exact penalised maximiser's."""
    X = _data(seed=3)
    l2 = 0.02
    bm = _fit(X, l2=l2)
    f1, f2 = frequencies(X, n_states=Q, pseudocount=1.0 / X.shape[0])
    h, J = _penalised_mle(f1, f2, l2)
    assert np.allclose(J.sum(axis=3), 0.0, atol=1e-3)
    assert np.max(np.abs(bm.coupling_ - J)) < 0.05
    centred = h - h.mean(axis=1, keepdims=True)
    assert np.max(np.abs(bm.intercept_ - centred)) < 0.05
    # The penalty matters at this tolerance: the unpenalised optimum differs.
    _, J0 = _penalised_mle(f1, f2, 0.0)
    assert np.max(np.abs(J0 - J)) > 0.15


def test_gradient_matches_finite_differences():
    """log_likelihood_gradient with exact marginals is the derivative of the
    exact penalised mean log-likelihood (each pair block perturbed in both
    of its stored copies)."""
    X = _data(seed=5, n=500)
    f1, f2 = frequencies(X, n_states=Q, pseudocount=0.01)
    h, J = _random_model(7, scale=0.3)
    l2 = 0.1

    def objective(h, J):
        log_z, _, _ = _exact_marginals(h, J)
        rows, cols = np.triu_indices(L, k=1)
        return (np.sum(f1 * h) + np.sum(f2[rows, cols] * J[rows, cols]) - log_z
                - l2 * np.sum(J[rows, cols] ** 2))  # fmt: skip

    _, p1, p2 = _exact_marginals(h, J)
    grad_h, grad_J = log_likelihood_gradient(f1, f2, p1, p2, J, l2)
    eps = 1e-6
    for i, a in [(0, 0), (2, 1), (3, 2)]:
        step = np.zeros_like(h)
        step[i, a] = eps
        numeric = (objective(h + step, J) - objective(h - step, J)) / (2 * eps)
        assert numeric == pytest.approx(grad_h[i, a], abs=1e-7)
    for i, j, a, b in [(0, 1, 0, 2), (1, 3, 2, 2), (0, 3, 1, 0)]:
        step = np.zeros_like(J)
        step[i, j, a, b] = step[j, i, b, a] = eps
        numeric = (objective(h, J + step) - objective(h, J - step)) / (2 * eps)
        assert numeric == pytest.approx(grad_J[i, j, a, b], abs=1e-7)
        assert grad_J[j, i, b, a] == grad_J[i, j, a, b]
    assert np.all(grad_J[np.arange(L), np.arange(L)] == 0.0)


def _swept_chains(h, J, betas, seed, n_sweeps=30):
    """Chains started uniformly at random and swept by the compiled sampler
    at the inverse temperatures ``betas`` (one a chain): ``(chains,
    counters, scores)``."""
    M = betas.size
    rng = np.random.default_rng(seed)
    chains = rng.integers(0, Q, size=(M, L)).astype(np.uint8)
    keys = rng.integers(0, 2**63, size=M).astype(np.uint64)
    counters = np.zeros(M, dtype=np.int64)
    scores = np.empty(M)
    gibbs_sweeps(chains, h.astype(np.float32), J.astype(np.float32), n_sweeps,
                 keys, counters, np.empty((0, M, L), dtype=np.uint8),
                 betas.astype(np.float32), scores)  # fmt: skip
    return chains, counters, scores


def test_gibbs_chains_sample_the_model():
    """The compiled sampler's chains, swept long, have the model's exact
    two-site marginals."""
    h, J = _random_model(11)
    chains, counters, _ = _swept_chains(h, J, np.ones(20000), seed=0)
    assert np.all(counters == 30 * L)
    _, p1, p2 = _exact_marginals(h, J)
    _, f2 = frequencies(chains, n_states=Q)
    assert np.max(np.abs(f2 - p2)) < 0.015


def test_gibbs_chains_draw_from_fields_summed_afresh():
    """The sampler's running fields give the draws of each site's fields
    summed from scratch (a numpy sweep with the same uniforms), and
    ``visited`` records every sweep's states."""
    from sklearn_rbm._numerics.random import uniform

    h, J = _random_model(5)
    h32, J32 = h.astype(np.float32), J.astype(np.float32)
    M, n_sweeps = 200, 3
    rng = np.random.default_rng(1)
    chains = rng.integers(0, Q, size=(M, L)).astype(np.uint8)
    keys = rng.integers(0, 2**63, size=M).astype(np.uint64)
    visited = np.empty((n_sweeps, M, L), dtype=np.uint8)
    expected = chains.astype(np.int64)
    expected_visited = []
    for _ in range(n_sweeps):
        for i in range(L):
            for c in range(M):
                fields = h[i] + J[i, np.arange(L), :, expected[c]].sum(axis=0)
                p = np.exp(fields - fields.max())
                u = uniform(keys[c], i + L * len(expected_visited)) * p.sum()
                expected[c, i] = min(np.searchsorted(np.cumsum(p), u, "right"), Q - 1)
        expected_visited.append(expected.copy())
    counters = np.zeros(M, dtype=np.int64)
    gibbs_sweeps(chains, h32, J32, n_sweeps, keys, counters, visited,
                 np.ones(M, np.float32), np.empty(M))  # fmt: skip
    assert np.array_equal(chains, expected)
    assert np.array_equal(visited, np.array(expected_visited))
    assert np.all(counters == n_sweeps * L)


def test_tempered_chains_sample_the_model_at_their_temperature():
    """A chain at inverse temperature ``beta`` samples ``P(x)^beta`` (the
    exact marginals of ``(beta h, beta J)``), and ``scores`` is the model's
    log-weight of each chain's last state."""
    h, J = _random_model(12)
    M = 20000
    chains, _, scores = _swept_chains(h, J, np.repeat([1.0, 0.4], M // 2), seed=1)
    for half, beta in ((slice(0, M // 2), 1.0), (slice(M // 2, M), 0.4)):
        _, _, p2 = _exact_marginals(beta * h, beta * J)
        _, f2 = frequencies(chains[half], n_states=Q)
        assert np.max(np.abs(f2 - p2)) < 0.02
    _, _, p2_cold = _exact_marginals(h, J)
    assert np.max(np.abs(frequencies(chains[M // 2 :], n_states=Q)[1] - p2_cold)) > 0.05
    np.testing.assert_allclose(scores, _energies(chains.astype(int), h, J), atol=1e-5)


def _ferromagnet(coupling=2.0):
    """A Potts model with ``Q`` modes: every pair of sites prefers equal
    states by ``coupling``, a slight field breaks the symmetry."""
    h = np.zeros((L, Q))
    h[:, 1] = 0.3
    J = np.zeros((L, L, Q, Q))
    for i in range(L):
        for j in range(L):
            if i != j:
                J[i, j] = coupling * np.eye(Q)
    return h, J


def test_tempered_sampler_crosses_barriers_plain_chains_do_not():
    """On a model with ``Q`` well-separated modes, chains all started in one
    mode stay there under Gibbs sampling at ``beta = 1``; tempered ones
    (their swaps keep every temperature's distribution) reach the model's
    exact marginals, and their swaps were accepted."""
    from sklearn_rbm._potts.boltzmann import _Chains

    h, J = _ferromagnet()
    _, e1, e2 = _exact_marginals(h, J)
    n = 4000

    def marginals(ladder):
        states = np.zeros((n * ladder.size, L), dtype=np.uint8)  # one mode
        sampler = _Chains(states, 2, Q, np.random.default_rng(2), ladder)
        sampler.set_model(h, J)
        for _ in range(40):
            sampler.sweep(2)
        return sampler.statistics(), sampler

    (p1, p2), tempered = marginals(np.array([1.0, 0.75, 0.5, 0.3]))
    assert np.max(np.abs(p1 - e1)) < 0.03
    assert np.max(np.abs(p2 - e2)) < 0.03
    acceptance = tempered.swap_acceptance()
    assert acceptance.shape == (3,) and np.all((acceptance > 0.05) & (acceptance < 1))
    assert tempered.states.shape == (n, L)
    (plain_p1, _), plain = marginals(np.array([1.0]))
    assert np.max(np.abs(plain_p1 - e1)) > 0.3  # stuck in the start's mode
    assert plain.swap_acceptance().shape == (0,)


def test_tempered_fit_is_thread_invariant_and_reports_swaps():
    X = _data(n=400)
    settings = dict(n_chains=200, n_temperatures=3, min_beta=0.5, max_iter=8,
                    target_pearson=1.0, random_state=4)  # fmt: skip
    one = _fit(X, n_jobs=1, **settings)
    two = _fit(X, n_jobs=2, **settings)
    assert np.array_equal(one.coupling_, two.coupling_)
    assert np.array_equal(one.chains_, two.chains_)
    assert one.chains_.shape == (200, X.shape[1])
    assert one.swap_acceptance_.shape == (2,)
    assert np.all((one.swap_acceptance_ > 0) & (one.swap_acceptance_ <= 1))
    untempered = _fit(X, n_jobs=1, **{**settings, "n_temperatures": 1})
    assert untempered.swap_acceptance_.shape == (0,)
    assert not np.array_equal(untempered.coupling_, one.coupling_)


def test_tempered_fit_warns_about_a_gap_in_its_ladder():
    """Two temperatures far apart on a strongly coupled model: the hot
    chains' states are almost never accepted at ``beta = 1``, and the fit
    says so, naming the pair."""
    rng = np.random.default_rng(0)
    X = np.repeat(rng.integers(0, 2, size=(400, 1)), 20, axis=1).astype(np.uint8)
    flips = rng.random(X.shape) < 0.02
    X[flips] = 1 - X[flips]
    bm = PottsBoltzmannMachine(n_chains=200, max_iter=5, n_temperatures=2,
                               min_beta=0.05, random_state=0)  # fmt: skip
    with pytest.warns(UserWarning, match="1 <-> 0.05"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            bm.fit(X)
    assert bm.swap_acceptance_[0] < 0.01


def test_tempered_fit_of_one_update_does_not_warn_about_unproposed_pairs():
    """One update runs one swap round, of the even pairs only: the odd
    pairs' acceptance (0 of 0) is no gap to warn about."""
    X = _data(n=400)
    bm = PottsBoltzmannMachine(n_chains=200, max_iter=1, n_temperatures=3,
                               target_pearson=1.0, random_state=0)  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        # A ConvergenceWarning is a UserWarning: this filter, added last,
        # is matched first.
        warnings.simplefilter("ignore", ConvergenceWarning)
        bm.fit(X)
    assert bm.swap_acceptance_[0] > 0.1
    assert bm.swap_acceptance_[1] == 0.0


def test_fit_is_bit_identical_across_thread_counts():
    X = _data(n=400)
    settings = dict(n_chains=300, max_iter=15, target_pearson=1.0, random_state=4)
    one = _fit(X, n_jobs=1, **settings)
    two = _fit(X, n_jobs=2, **settings)
    assert np.array_equal(one.coupling_, two.coupling_)
    assert np.array_equal(one.chains_, two.chains_)
    other = _fit(X, n_jobs=2, **{**settings, "random_state": 5})
    assert not np.array_equal(one.chains_, other.chains_)


def test_stops_at_target_and_records_history():
    X = _data(n=2000)
    bm = PottsBoltzmannMachine(n_chains=4000, target_pearson=0.9, random_state=0)
    bm.fit(X)
    history = bm.history_
    assert bm.n_iter_ == history["pearson"].size < bm.max_iter
    reached = (history["pearson"] >= 0.9) & (np.abs(history["slope"] - 1) <= 0.05)
    # The stop is decided on equilibrated chains, and only there.
    tested = history["equilibrated"]
    assert reached[-1] and tested[-1] and not (reached & tested)[:-1].any()
    assert np.all(np.diff(history["time"]) >= 0)
    # The chains are samples of the fitted model: they pass the generative check.
    check = compare_correlations(X, bm.chains_, n_triplets=2000)
    assert check.pearson > 0.85 and 0.7 < check.slope < 1.3
    with pytest.warns(ConvergenceWarning, match="max_iter=2"):
        PottsBoltzmannMachine(n_chains=50, max_iter=2, random_state=0).fit(X)


def test_init_from_a_fitted_model_and_bad_init():
    X = _data(n=600)
    plm = PottsPseudoLikelihood(lambda_e=0.1).fit(X)
    bm = PottsBoltzmannMachine(init=plm, n_chains=500, max_iter=1, target_pearson=-1,
                               slope_tolerance=10.0, random_state=0)  # fmt: skip
    bm.fit(X)  # stops at the first check: the start's parameters, gauged
    assert np.allclose(bm.coupling_, plm.coupling_)
    with pytest.raises(ValueError, match="init was fitted on L=4"):
        PottsBoltzmannMachine(init=plm).fit(np.c_[X, X[:, 0]])
    message = "init must be 'auto', 'independent', 'pseudolikelihood' or a fitted"
    with pytest.raises(ValueError, match=message):
        PottsBoltzmannMachine(init=PottsPseudoLikelihood()).fit(X)


@pytest.fixture
def failing_tests(monkeypatch):
    """Chains that pass while the model's own samples do not: the samples
    after equilibration (30 sweeps, states not forgotten) made independent."""
    from sklearn_rbm._potts import boltzmann

    statistics = boltzmann._Chains.statistics

    def equilibrate(self, restarted):
        self.lost = True
        return 30, False

    def independent_statistics(self):
        p1, p2 = statistics(self)
        if getattr(self, "lost", False):
            self.lost = False
            p2 = p1[:, None, :, None] * p1[None, :, None, :]
        return p1, p2

    monkeypatch.setattr(boltzmann._Chains, "equilibrate", equilibrate)
    monkeypatch.setattr(boltzmann._Chains, "statistics", independent_statistics)


def test_failed_stopping_tests_are_reported(failing_tests, capsys):
    """The fit trains on, the verbose line reports each failed test, and the
    ConvergenceWarning names the cure, more sweeps per update, rather than
    more updates."""
    X = _data(n=600)
    message = (
        r"3 stopping test\(s\) failed.*not forgotten.*increase n_sweeps \(now 10\)"
    )
    with pytest.warns(ConvergenceWarning, match=message):
        bm = PottsBoltzmannMachine(
            n_chains=500, target_pearson=0.5, slope_tolerance=1.0, max_iter=7,
            verbose=1, random_state=0,
        ).fit(X)  # fmt: skip
    out = capsys.readouterr().out
    assert out.count("not passed") == 3 and "next test from update" in out
    assert bm.history_["equilibrated"].sum() == 3


@pytest.mark.parametrize("equilibrated", [False, True])
def test_unequilibrated_stopping_tests_halve_the_rate(
    failing_tests, monkeypatch, equilibrated
):
    """Robbins-Monro on evidence: a failed test whose chains did not reach
    the model's equilibrium halves the rate of the updates after it, on top
    of the ``1 / sqrt(1 + t / 100)`` decay, and the warning gives the rate
    reached; a failed test whose chains did equilibrate leaves it."""
    from sklearn_rbm._potts import boltzmann

    if equilibrated:  # forgotten, the restarted chains where the others are

        def equilibrate(self, restarted):
            self.lost = True
            return 30, True

        monkeypatch.setattr(boltzmann._Chains, "equilibrate", equilibrate)
        monkeypatch.setattr(
            boltzmann._Chains,
            "energy_check",
            lambda self, restarted: boltzmann._EnergyCheck(1.0, 1.0, 0.5),
        )
    X = _data(n=600)
    with pytest.warns(ConvergenceWarning, match="halved the rate") as caught:
        bm = PottsBoltzmannMachine(
            n_chains=500, target_pearson=0.5, slope_tolerance=1.0, max_iter=7,
            learning_rate=0.002, random_state=0,
        ).fit(X)  # fmt: skip
    tests = np.flatnonzero(bm.history_["equilibrated"])
    assert tests.size == 3
    cuts = 0 if equilibrated else np.searchsorted(tests, np.arange(7), side="right")
    expected = 0.002 * 0.5**cuts / np.sqrt(1.0 + np.arange(7) / 100.0)
    np.testing.assert_allclose(bm.history_["rate"], expected, rtol=1e-12)
    message = str(caught[-1].message)
    assert f"{0 if equilibrated else 3} test(s) whose chains had not" in message
    assert f"now {expected[-1]:.3g})" in message
    cure = "it is not fitted yet" if equilibrated else "increase n_sweeps"
    assert cure in message


def _fit_in_pieces(X, pieces, **settings):
    """One estimator fitted ``len(pieces)`` times with ``warm_start``, the
    ``k``-th fit for ``pieces[k]`` updates, pickled and loaded in between
    (a long fit saved and resumed)."""
    bm = PottsBoltzmannMachine(**{"n_states": Q, "warm_start": True, **settings})
    for max_iter in pieces:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            bm = pickle.loads(pickle.dumps(bm)).set_params(max_iter=max_iter).fit(X)
    return bm


def _assert_same_fit(one, other):
    for name in ("intercept_", "coupling_", "chains_", "swap_acceptance_"):
        assert np.array_equal(getattr(one, name), getattr(other, name)), name
    for name in ("pearson", "slope", "equilibrated", "density", "rate"):
        assert np.array_equal(one.history_[name], other.history_[name]), name
    assert one.n_iter_ == other.n_iter_ == one.history_["pearson"].size


@pytest.mark.parametrize(
    "settings",
    [
        {},
        {"n_temperatures": 2, "min_beta": 0.6},  # the swaps' own stream
        {"couplings": "activation"},  # activations every 10 updates
        # Decimation at every update (the check always passes), the gauge
        # fixed at the first.
        {
            "couplings": "decimation",
            "density": 0.3,
            "target_pearson": -1.0,
            "slope_tolerance": 10.0,
        },
    ],
    ids=["dense", "tempered", "activation", "decimation"],
)
def test_warm_start_goes_on_bit_for_bit(settings):
    """A fit of 7 updates gone on with 5 more, saved and loaded in between,
    is the fit of 12: the parameters, chains, swaps and history."""
    X = _data(n=400)
    settings = {"n_chains": 200, "target_pearson": 1.0, "learning_rate": 0.03,
                "random_state": 3, **settings}  # fmt: skip
    whole = _fit(X, max_iter=12, **settings)
    _assert_same_fit(_fit_in_pieces(X, (7, 5), **settings), whole)
    if settings.get("couplings") == "decimation":
        assert whole.density_ < 1.0


def test_warm_start_goes_on_with_the_stopping_tests_schedule(failing_tests):
    """Failed stopping tests (each costing 3 updates of sweeps) fall where
    they fall in one fit, and the warning counts them all."""
    X = _data(n=600)
    settings = {"n_chains": 500, "target_pearson": 0.5, "slope_tolerance": 1.0,
                "random_state": 0}  # fmt: skip
    with pytest.warns(ConvergenceWarning, match=r"3 stopping test\(s\) failed"):
        whole = PottsBoltzmannMachine(n_states=Q, max_iter=7, **settings).fit(X)
    pieces = _fit_in_pieces(X, (4,), **settings).set_params(max_iter=3)
    assert pieces.history_["equilibrated"].sum() == 2
    message = r"max_iter=3 more updates \(4 before them\).*3 stopping test\(s\)"
    with pytest.warns(ConvergenceWarning, match=message):
        pieces.fit(X)
    _assert_same_fit(pieces, whole)


def _clone_of(fitted, **changes):
    """A fitted estimator's copy (its kept state too) with other settings."""
    return pickle.loads(pickle.dumps(fitted)).set_params(**changes)


def test_warm_start_refuses_what_it_cannot_go_on_with():
    X = _data(n=400)
    settings = {"n_chains": 200, "target_pearson": 1.0, "random_state": 0}
    kept = _fit_in_pieces(X, (2,), **settings)
    # Sweeps an update may change: the next update runs them.
    kept.set_params(n_sweeps=3, max_iter=1)
    with pytest.warns(ConvergenceWarning, match=r"\(2 before them\)"):
        kept.fit(X)
    assert kept.n_iter_ == 3 and kept._fit_state.sampler.visited.shape[0] == 3
    with pytest.raises(ValueError, match=r"cannot change n_chains \(was 200\)"):
        _clone_of(kept, n_chains=100).fit(X)
    with pytest.raises(ValueError, match="frequencies of X"):
        _clone_of(kept).fit(X[:300])
    with pytest.raises(ValueError, match="frequencies of X"):
        _clone_of(kept, pseudocount=0.1).fit(X)
    plain = _fit(X, max_iter=2, **settings).set_params(warm_start=True)
    with pytest.raises(ValueError, match="ran with warm_start=False"):
        plain.fit(X)
    # A piece that fails leaves the kept state as it was (fits are all or
    # nothing): it can be run again.
    diverging = _clone_of(kept, learning_rate=1e308, max_iter=5)
    with pytest.raises(FloatingPointError):
        diverging.fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        retried = diverging.set_params(learning_rate=None).fit(X)
        _assert_same_fit(retried, _clone_of(kept, max_iter=5).fit(X))


def test_equilibration_test_tells_forgotten_states():
    """The chains have forgotten their states when their overlap with them
    is that of different chains; not when they are the same states."""
    from sklearn_rbm._potts.boltzmann import _decorrelated

    rng = np.random.default_rng(0)
    before = rng.integers(0, 3, size=(2000, 6)).astype(np.uint8)
    assert not _decorrelated(before, before)
    assert _decorrelated(rng.permutation(before), before)
    moved = before.copy()
    moved[:, :3] = rng.integers(0, 3, size=(2000, 3))
    assert not _decorrelated(moved, before)


def test_energy_check_compares_restarted_with_persistent_chains():
    """Two groups of scores agree within three standard errors of their
    difference; restarted chains are burned in from one error below; with
    none restarted there is nothing to disagree."""
    from sklearn_rbm._potts.boltzmann import _EnergyCheck

    rng = np.random.default_rng(0)
    scores = rng.normal(size=800)
    restarted = slice(0, 100)
    error = np.sqrt(scores[:100].var() / 100 + scores[100:].var() / 700)
    same = _EnergyCheck.of(scores, restarted)
    assert same.agrees and same.error == pytest.approx(error)
    for shift, agrees, burned_in in ((5 * error, False, True),
                                     (-5 * error, False, False),
                                     (-2 * error, True, False)):  # fmt: skip
        moved = scores.copy()
        moved[restarted] += shift - (moved[:100].mean() - moved[100:].mean())
        check = _EnergyCheck.of(moved, restarted)
        assert (check.agrees, check.burned_in) == (agrees, burned_in)
    assert _EnergyCheck.of(scores, slice(0, 0)).agrees


def _two_phase_fit(coupling, **settings):
    """A fit from a Potts ferromagnet on 24 two-state sites whose persistent
    chains all start in its all-0 phase, the data too; state 1 is favoured
    by 0.5 at every site, so the all-1 phase is 12 nats more probable. By
    default its stopping test (any Pearson correlation and slope pass) is
    its first update."""
    from sklearn_rbm._potts.boltzmann import _Chains

    n_sites, q = 24, 2
    h = np.zeros((n_sites, q))
    h[:, 1] = 0.5
    J = np.zeros((n_sites, n_sites, q, q))
    J[:, :, 0, 0] = J[:, :, 1, 1] = coupling
    J[np.arange(n_sites), np.arange(n_sites)] = 0.0

    def from_all_0(n, seed):
        chains = _Chains(
            np.zeros((n, n_sites), np.uint8), 50, q, np.random.default_rng(seed)
        )
        chains.set_model(h, J)
        chains.sweep(50)
        return chains.states.copy()

    start = PottsBoltzmannMachine(n_states=q)
    start.intercept_, start.coupling_ = h, J
    start.n_features_in_, start.n_states_ = n_sites, q
    start.chains_ = from_all_0(256, 1)
    fit = dict(learning_rate=1e-9, target_pearson=-1.0, slope_tolerance=1e9,
               max_iter=1, random_state=0)  # fmt: skip
    bm = PottsBoltzmannMachine(
        n_states=q, n_chains=256, init=start, **{**fit, **settings}
    )
    return bm.fit(from_all_0(400, 2)), start


def test_restarted_chains_catch_a_phase_the_persistent_chains_miss():
    """Persistent chains stuck in the less probable phase of a strong
    ferromagnet pass any correlation test; the 32 chains the test restarts
    at random states fall mostly into the other phase, more probable by 12
    nats, and the fit does not stop. With weak couplings (one phase) the
    same test passes."""
    message = (
        r"restarted at random states reached a mean statistical energy E\(x\) of "
        r"[0-9.]+, the persistent chains [0-9.]+.*more probable states than "
        r"the persistent chains hold"
    )
    with pytest.warns(ConvergenceWarning, match=message):
        bm, start = _two_phase_fit(0.3)
    assert bm.history_["equilibrated"][0] and bm.n_iter_ == 1
    assert start.chains_.mean() < 0.01  # the persistent chains' phase
    assert np.mean(bm.chains_[:32].mean(axis=1) > 0.5) > 0.5  # the restarted
    assert np.all(bm.chains_[32:].mean(axis=1) < 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        bm, _ = _two_phase_fit(0.02)
    assert bm.history_["equilibrated"][0] and bm.n_iter_ == 1


def test_restarts_at_every_update_push_down_a_phase_the_data_lacks():
    """The ferromagnet above, its chains and data in the all-0 phase, fitted
    for 100 updates with no stop: the chains restarted at every update fall
    into the all-1 phase, and the gradient lowers state 1's field at every
    site until samples from random states are in the data's phase. Without
    the restarts the chains never see that phase, and the pseudocount's
    share of state 1 in the data raises the fields instead (most of the
    samples in the all-1 phase)."""
    with pytest.warns(ConvergenceWarning):
        bm, start = _two_phase_fit(
            0.3, learning_rate=0.05, max_iter=100, target_pearson=1.0,
            slope_tolerance=0.0,
        )  # fmt: skip
    lowered = np.diff(bm.intercept_, axis=1) < np.diff(start.intercept_, axis=1)
    assert lowered.all()
    samples = bm.sample(512, random_state=0)
    assert np.mean(samples.mean(axis=1) > 0.5) < 0.05


def test_restarts_turn_over_the_chains_and_skip_tiny_sets():
    """Each test restarts a block of one chain in eight, the next block at
    the next test, every chain after eight tests; fewer than 16 chains are
    not restarted (two chains per block at least). Between tests each
    update restarts one chain in a hundred, none of fewer than 100."""
    from sklearn_rbm._potts.boltzmann import _Chains

    rng = np.random.default_rng(0)
    chains = _Chains(np.zeros((160, 5), np.uint8), 1, 3, rng, ladder=(1.0, 0.9))
    blocks = [chains.restarted_columns(test) for test in range(9)]
    assert [(b.start, b.stop) for b in blocks[:2]] == [(0, 10), (10, 20)]
    assert blocks[8] == blocks[0]
    chains.restart(blocks[1], (1,))
    moved = np.flatnonzero(chains.all_states.any(axis=1))
    # Both temperatures' rows of the block (swaps keep states in a column).
    assert set(moved) <= set(range(10, 20)) | set(range(90, 100))
    assert len(moved) > 15
    small = _Chains(np.zeros((15, 5), np.uint8), 1, 3, rng)
    assert small.restarted_columns(0) == slice(0, 0)
    chains = _Chains(np.zeros((200, 5), np.uint8), 1, 3, rng)
    chains.restart_at_update(101)
    assert set(np.flatnonzero(chains.states.any(axis=1))) == {2, 3}
    chains.restart_at_update(102)
    assert chains.states[4:6].any() and not chains.states[6:].any()
    small = _Chains(np.zeros((99, 5), np.uint8), 1, 3, rng)
    small.restart_at_update(0)
    assert not small.states.any()


def test_diverging_fit_names_the_learning_rate():
    X = _data(n=300)
    with pytest.raises(FloatingPointError, match="learning_rate=1e"):
        _fit(X, learning_rate=1e308, max_iter=5, n_chains=50)


# -- the statistics ---------------------------------------------------------------


def test_frequencies_and_correlations_by_brute_force():
    rng = np.random.default_rng(2)
    X = rng.integers(0, 3, size=(50, 4))
    w = rng.random(50)
    pi = 0.1
    f1, f2 = frequencies(X, w, n_states=3, pseudocount=pi)
    W = w / w.sum()
    for i, j, a, b in [(0, 1, 2, 0), (3, 2, 1, 1), (1, 1, 2, 2)]:
        pair = np.sum(W * (X[:, i] == a) * (X[:, j] == b))
        if i == j:
            assert f2[i, j, a, b] == pytest.approx((1 - pi) * pair + pi / 3)
        else:
            assert f2[i, j, a, b] == pytest.approx((1 - pi) * pair + pi / 9)
        assert f1[i, a] == pytest.approx((1 - pi) * np.sum(W * (X[:, i] == a)) + pi / 3)
    C = connected_correlations(X, w, n_states=3)
    g1, g2 = frequencies(X, w, n_states=3)
    assert C[0, 2, 1, 2] == pytest.approx(g2[0, 2, 1, 2] - g1[0, 1] * g1[2, 2])
    assert np.all(C[1, 1] == 0)


def test_pearson_slope_of_tiny_correlations():
    """Correlations so small (1e-101) that the product of their variances underflows
    (weights of 1e150 make such data) still give Pearson's correlation."""
    from sklearn_rbm._potts.statistics import pearson_slope

    rng = np.random.default_rng(0)
    x = rng.normal(size=50)
    y = x + 0.5 * rng.normal(size=50)
    expected = np.corrcoef(x, y)[0, 1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pearson, slope = pearson_slope(1e-101 * x, 1e-101 * y)
    assert pearson == pytest.approx(expected, rel=1e-12)
    assert slope == pytest.approx(pearson_slope(x, y)[1], rel=1e-12)


def test_three_site_check_against_numpy():
    from sklearn_rbm._potts.statistics import three_site_connected

    rng = np.random.default_rng(3)
    X = rng.integers(0, 3, size=(80, 5)).astype(np.uint8)
    w = rng.random(80)
    sites, states = np.array([[0, 2, 4]]), np.array([[1, 0, 2]])
    W = w / w.sum()
    xa, xb, xc = (X[:, 0] == 1), (X[:, 2] == 0), (X[:, 4] == 2)
    m = lambda *z: np.sum(W * np.prod(z, axis=0))  # noqa: E731
    truth = (m(xa, xb, xc) - m(xa, xb) * m(xc) - m(xa, xc) * m(xb)
             - m(xb, xc) * m(xa) + 2 * m(xa) * m(xb) * m(xc))  # fmt: skip
    assert three_site_connected(X, w, sites, states)[0] == pytest.approx(truth)


def test_compare_correlations_tells_good_samples_from_independent_ones():
    X = _data(n=6000)
    good = compare_correlations(X[:3000], X[3000:], n_triplets=3000)
    rng = np.random.default_rng(0)
    shuffled = np.column_stack([rng.permutation(c) for c in X[3000:].T])
    bad = compare_correlations(X[:3000], shuffled, n_triplets=3000)
    assert good.pearson > 0.95 and 0.85 < good.slope < 1.15
    assert good.pearson_three_site > 0.5
    assert abs(bad.slope) < 0.1


# -- mutation effects -------------------------------------------------------------


def _mutants(s, q):
    rows = []
    for i in range(s.size):
        for a in range(q):
            row = s.copy()
            row[i] = a
            rows.append(row)
    return np.array(rows)


@pytest.mark.parametrize("fitted", ["plm", "bm"])
def test_mutation_effects_are_energy_differences(fitted):
    X = _data(n=500)
    if fitted == "plm":
        model = PottsPseudoLikelihood(lambda_e=0.5).fit(X)
    else:
        model = _fit(X, n_chains=500, max_iter=30)
    s = X[7].astype(np.int64)
    effects = model.mutation_effects(s)
    truth = model.energy(_mutants(s, Q)) - model.energy(s[None, :])[0]
    assert effects.shape == (L, Q)
    assert np.allclose(effects.ravel(), truth, atol=1e-12)
    assert np.all(effects[np.arange(L), s] == 0.0)
    assert np.abs(effects).max() > 0.1


def test_rbm_mutation_effects_are_free_energy_differences():
    X = _data(n=300)
    rbm = CategoricalRBM(n_components=3, n_states=Q, n_iter=2, random_state=0).fit(X)
    s = X[3].astype(np.int64)
    effects = rbm.mutation_effects(s)
    truth = rbm.free_energy(s[None, :].astype(float))[0] - rbm.free_energy(
        _mutants(s, Q).astype(float)
    )
    assert np.allclose(effects.ravel(), truth)
    assert np.all(effects[np.arange(L), s] == 0.0)


def test_parse_mutations():
    wild = "KLCAG"
    parsed = parse_mutations(["L11V", "K10A:G14W"], wild, offset=10)
    assert parsed[0][0].tolist() == [1] and parsed[0][1].tolist() == [18]
    assert parsed[1][0].tolist() == [0, 4] and parsed[1][1].tolist() == [1, 19]
    codes = np.array(["-ACDEFGHIKLMNPQRSTVWY".index(c) for c in wild])
    assert parse_mutations("C3A", codes)[0][0].tolist() == [2]
    mismatch = "'A2V' says residue 2 is 'A', but the wild type has 'L'"
    with pytest.raises(ValueError, match=mismatch):
        parse_mutations("A2V", wild)
    with pytest.raises(ValueError, match="position 9 of 'K9A' is out of range"):
        parse_mutations("K9A", wild)
    with pytest.raises(ValueError, match="unknown letter 'Z' in 'K1Z'"):
        parse_mutations("K1Z", wild)
    with pytest.raises(ValueError, match="cannot read 'K1'"):
        parse_mutations("K1", wild)


def test_dms_table_in_a_few_lines():
    """Single and double mutants of a table scored from the effects and the
    energy agree with the energies of the mutated sequences."""
    X = _data(n=500)
    model = PottsPseudoLikelihood(lambda_e=0.5).fit(X)
    alphabet = "-AC"
    s = X[0].astype(np.int64)
    wild = "".join(alphabet[c] for c in s)
    other = {"-": "A", "A": "C", "C": "-"}
    labels = [f"{wild[0]}1{other[wild[0]]}", f"{wild[2]}3{other[wild[2]]}"]
    effects = model.mutation_effects(s)
    parsed = parse_mutations(labels, wild, alphabet=alphabet)
    scores = [effects[i[0], a[0]] for i, a in parsed]
    for (i, a), score in zip(parsed, scores, strict=True):
        mutant = s.copy()
        mutant[i] = a
        assert score == pytest.approx(
            model.energy(mutant[None])[0] - model.energy(s[None])[0]
        )


# -- sparse couplings ---------------------------------------------------------------

EDGES = [(0, 1), (2, 3), (1, 4)]


def _sparse_data(n=20000, seed=0):
    """Rows drawn exactly from a 5-site model coupled only on ``EDGES``."""
    rng = np.random.default_rng(seed)
    n_sites = 5
    h = 0.5 * rng.normal(size=(n_sites, Q))
    J = np.zeros((n_sites, n_sites, Q, Q))
    for i, j in EDGES:
        J[i, j] = 1.5 * rng.normal(size=(Q, Q))
        J[j, i] = J[i, j].T
    S = _states(n_sites, Q)
    e = _energies(S, h, J)
    p = np.exp(e - e.max())
    return S[rng.choice(S.shape[0], size=n, p=p / p.sum())].astype(np.uint8)


def _active_pairs(coupling):
    """The pairs ``i < j`` with a non-zero coupling entry."""
    blocks = np.any(coupling != 0.0, axis=(2, 3))
    return {(i, j) for i, j in zip(*np.nonzero(np.triu(blocks)), strict=True)}


def test_activation_grows_the_true_edges_first():
    """From no couplings, the entries activated first (those of the largest
    gradient) lie on the true edges; the others stay exactly zero (no gauge
    fills them in) and the blocks symmetric."""
    X = _sparse_data()
    with pytest.warns(ConvergenceWarning):
        bm = PottsBoltzmannMachine(
            n_states=Q, couplings="activation", n_chains=1000, max_iter=100,
            random_state=0,
        ).fit(X)  # fmt: skip
    J = bm.coupling_
    assert np.array_equal(J != 0.0, (J != 0.0).transpose(1, 0, 3, 2))
    assert np.allclose(J, J.transpose(1, 0, 3, 2), rtol=0.0, atol=1e-12)
    rows, cols = np.triu_indices(5, k=1)
    # One entry of the 90 every 10 updates.
    assert np.count_nonzero(J[rows, cols]) == 10
    assert bm.density_ == pytest.approx(10 / 90)
    assert _active_pairs(J) == set(EDGES)
    assert bm.history_["density"][0] == 0.0


def test_decimation_keeps_the_true_edges():
    """Decimating a dense fit to a density below the true one (27 of 90
    entries) prunes every other pair; the fit still passes its stopping test
    on equilibrated chains."""
    X = _sparse_data()
    bm = PottsBoltzmannMachine(
        n_states=Q, couplings="decimation", density=0.2, n_chains=1000,
        target_pearson=0.9, random_state=0,
    ).fit(X)  # fmt: skip
    J = bm.coupling_
    assert np.array_equal(J != 0.0, (J != 0.0).transpose(1, 0, 3, 2))
    assert np.allclose(J, J.transpose(1, 0, 3, 2), rtol=0.0, atol=1e-12)
    rows, cols = np.triu_indices(5, k=1)
    assert np.count_nonzero(J[rows, cols]) == 18 and bm.density_ == 0.2
    assert _active_pairs(J) == set(EDGES)
    # The first decimation step follows the first update's check.
    assert bm.history_["density"][0] > 0.95
    assert bm.history_["equilibrated"][-1] and bm.history_["pearson"][-1] >= 0.9
