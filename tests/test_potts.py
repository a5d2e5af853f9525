"""PottsPseudoLikelihood against independent truth: finite differences,
brute-force pseudo-likelihood maxima and log-likelihoods on tiny models, the
two-state FVBM, and couplings recovered from a known sparse model."""

import itertools
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.optimize
from scipy.special import logsumexp
from sklearn.exceptions import ConvergenceWarning

from sklearn_rbm import FVBMPseudoLikelihood, PottsPseudoLikelihood
from sklearn_rbm._potts import kernels
from sklearn_rbm._potts.chains import draw_samples
from sklearn_rbm._potts.model import (
    PairLayout,
    Preconditioned,
    PseudoLikelihoodObjective,
    diagonal_preconditioner,
    zero_sum_gauge,
)
from sklearn_rbm.datasets import make_fvbm


def _random_model(L, q, rng, scale=0.5):
    layout = PairLayout(L, q)
    theta = rng.normal(0.0, scale, layout.size)
    h, e = layout.split(theta)
    return layout, theta, h.copy(), layout.symmetric(e)


def _naive_energy(x, h, J):
    L = len(x)
    return sum(h[i, x[i]] for i in range(L)) + sum(
        J[i, j, x[i], x[j]] for i in range(L) for j in range(i + 1, L)
    )


def _naive_objective(theta, X, w, layout, lambda_h, lambda_e):
    """plmc's objective written from its definition, state by state."""
    h, e = layout.split(theta)
    J = layout.symmetric(e)
    q = layout.q
    total = 0.0
    for x, weight in zip(X, w, strict=True):
        for i in range(layout.L):
            energies = []
            for a in range(q):
                y = list(x)
                y[i] = a
                energies.append(_naive_energy(y, h, J))
            total -= weight * (energies[x[i]] - logsumexp(energies))
    return total + lambda_h * np.sum(h**2) + lambda_e * np.sum(e**2)


def _numpy_objective(theta, X, w, layout, lambda_h, lambda_e):
    """The same objective vectorised with numpy (one-hot einsum), for the
    brute-force minimisation."""
    h, e = layout.split(theta)
    J = layout.symmetric(e)
    Y = np.eye(layout.q)[X]  # (n, L, q)
    fields = h + np.einsum("ijab,njb->nia", J, Y)
    log_cond = fields - logsumexp(fields, axis=2, keepdims=True)
    data = -np.einsum("n,nia,nia->", w, Y, log_cond)
    return data + lambda_h * np.sum(h**2) + lambda_e * np.sum(e**2)


def _tiny_data(L=4, q=3, n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, q, size=(n, L)).astype(np.uint8)
    X[:, 1] = np.where(rng.random(n) < 0.7, X[:, 0], X[:, 1])  # a coupling
    X[:10] = X[10:20]  # duplicated rows
    w = rng.uniform(0.2, 1.5, n)
    return X, w


def test_gradient_matches_finite_differences():
    rng = np.random.default_rng(0)
    X, w = _tiny_data()
    layout, theta, _, _ = _random_model(4, 3, rng)
    objective = PseudoLikelihoodObjective(X, w, layout, 0.3, 0.7)
    value, grad = objective(theta)
    assert value == pytest.approx(_naive_objective(theta, X, w, layout, 0.3, 0.7))
    numeric = scipy.optimize.approx_fprime(theta, lambda t: objective(t)[0], 1e-6)
    assert np.allclose(grad, numeric, rtol=1e-4, atol=1e-4)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("solver", ["lbfgs", "newton", "proximal"])
def test_fit_reaches_the_brute_force_pseudo_likelihood_maximum(solver):
    X, w = _tiny_data()
    layout = PairLayout(4, 3)
    lambda_h, lambda_e = 0.5, 2.0
    theta = np.random.default_rng(1).normal(size=layout.size)
    assert _numpy_objective(theta, X, w, layout, 0.5, 2.0) == pytest.approx(
        _naive_objective(theta, X, w, layout, 0.5, 2.0)
    )
    brute = scipy.optimize.minimize(
        _numpy_objective, np.zeros(layout.size),
        args=(X, w, layout, lambda_h, lambda_e), method="BFGS",
        options={"gtol": 1e-7},
    )  # fmt: skip
    potts = PottsPseudoLikelihood(
        n_states=3, lambda_h=lambda_h, lambda_e=lambda_e, solver=solver, tol=1e-12,
        max_iter=2000,
    ).fit(X, sample_weight=w)  # fmt: skip
    assert potts.objective_ == pytest.approx(brute.fun, rel=1e-7)
    h, e = layout.split(brute.x)
    h0, J0 = zero_sum_gauge(h, layout.symmetric(e))
    assert np.allclose(potts.coupling_, J0, atol=2e-4)
    assert np.allclose(potts.intercept_, h0, atol=2e-4)


def test_hessian_product_matches_finite_differences():
    rng = np.random.default_rng(2)
    X, w = _tiny_data()
    layout, theta, _, _ = _random_model(4, 3, rng)
    objective = PseudoLikelihoodObjective(X, w, layout, 0.3, 0.7)
    v = rng.normal(size=layout.size)
    eps = 1e-5
    numeric = (objective(theta + eps * v)[1] - objective(theta - eps * v)[1]) / (
        2 * eps
    )
    assert np.allclose(objective.hessian(theta)(v), numeric, rtol=1e-6, atol=1e-6)
    # On a sample of the objective's rows (its own order): the sample's
    # Hessian, its weights scaled to the total.
    rows = np.array([0, 3, 5, 8, 13, 21, 34])
    Xo, wo = objective.X, objective.w
    scale = wo.sum() / wo[rows].sum()
    sub = PseudoLikelihoodObjective(Xo[rows], wo[rows] * scale, layout, 0.3, 0.7)
    assert np.allclose(objective.hessian(theta, rows)(v), sub.hessian(theta)(v))


def _one_hot_gradient(theta, X, w, layout, lambda_h, lambda_e):
    """The objective's gradient from one-hot products: the residuals ``r =
    w (P - onehot)`` of every conditional, ``dJ[i, j, a, b] = sum_n r[n, i,
    a] y[n, j, b]`` and its mirror for each pair block."""
    h, e = layout.split(theta)
    J = layout.symmetric(e)
    Y = np.eye(layout.q)[X]
    fields = h + np.einsum("ijab,njb->nia", J, Y)
    P = np.exp(fields - logsumexp(fields, axis=2, keepdims=True))
    r = w[:, None, None] * (P - Y)
    full = np.einsum("nia,njb->ijab", r, Y)
    rows, cols = layout.rows, layout.cols
    pairs = full[rows, cols] + full[cols, rows].transpose(0, 2, 1)
    grad_h = r.sum(axis=0) + 2.0 * lambda_h * h
    return np.concatenate([grad_h.ravel(), (pairs + 2.0 * lambda_e * e).ravel()])


@pytest.mark.parametrize("chunk", [2048, 37])
def test_gradient_with_shared_prefixes_matches_one_hot_products(chunk):
    # Rows near a few prototypes share long prefixes (the fields kernel
    # restarts from kept partial sums, its groups of four columns end early
    # at them) and long runs of equal states (the scatter's groups); the
    # most common state of each site, which both kernels leave out of their
    # sums, changes with the chunk; L = 11 leaves groups of one to three
    # columns, a chunk of 37 rows splits both kernels' work.
    rng = np.random.default_rng(7)
    L, q, n = 11, 4, 300
    prototypes = rng.integers(0, q, size=(5, L))
    X = prototypes[rng.integers(0, 5, n)]
    mutate = rng.random(X.shape) < 0.15
    X = np.where(mutate, rng.integers(0, q, X.shape), X).astype(np.uint8)
    w = rng.uniform(0.2, 1.5, n)
    layout, theta, _, _ = _random_model(L, q, rng)
    objective = PseudoLikelihoodObjective(X, w, layout, 0.3, 0.7, chunk=chunk)
    value, grad = objective(theta)
    assert value == pytest.approx(_numpy_objective(theta, X, w, layout, 0.3, 0.7))
    expected = _one_hot_gradient(theta, X, w, layout, 0.3, 0.7)
    assert np.allclose(grad, expected, rtol=1e-10, atol=1e-10 * np.abs(expected).max())


def test_float32_data_term_agrees_with_float64():
    rng = np.random.default_rng(4)
    X, w = _tiny_data(L=7, n=300)
    layout, theta, _, _ = _random_model(7, 3, rng)
    exact = PseudoLikelihoodObjective(X, w, layout, 0.3, 0.7)
    single = PseudoLikelihoodObjective(
        X, w, layout, 0.3, 0.7, dtype=np.float32, chunk=64
    )
    (v64, g64), (v32, g32) = exact(theta), single(theta)
    assert v32 == pytest.approx(v64, rel=1e-6)
    assert np.abs(g32 - g64).max() <= 1e-5 * np.abs(g64).max()


def _site_objective_numpy(params, X, w, i, q, lambda_h, lambda_e):
    """Site i's penalised negative log conditional likelihood, written with
    one-hot arrays: params = (h_i, A_i) with A_i[j, a, b] the coupling of
    x_i = a with x_j = b."""
    L = X.shape[1]
    h, A = params[:q], params[q:].reshape(L, q, q).copy()
    A[i] = 0.0
    Y = np.eye(q)[X]
    fields = h + np.einsum("jab,njb->na", A, Y)
    log_cond = fields - logsumexp(fields, axis=1, keepdims=True)
    data = -np.sum(w * log_cond[np.arange(len(X)), X[:, i]])
    return data + lambda_h * np.sum(h**2) + 0.5 * lambda_e * np.sum(A**2)


def test_nodewise_averages_the_brute_force_site_fits():
    X, w = _tiny_data()
    L, q, lambda_h, lambda_e = 4, 3, 0.5, 2.0
    A = np.zeros((L, L, q, q))
    h = np.zeros((L, q))
    for i in range(L):
        fit = scipy.optimize.minimize(
            _site_objective_numpy, np.zeros(q + L * q * q),
            args=(X, w, i, q, lambda_h, lambda_e), method="BFGS",
            options={"gtol": 1e-8},
        )  # fmt: skip
        h[i], A[i] = fit.x[:q], fit.x[q:].reshape(L, q, q)
        A[i, i] = 0.0
    J = 0.5 * (A + A.transpose(1, 0, 3, 2))
    potts = PottsPseudoLikelihood(
        n_states=q, lambda_h=lambda_h, lambda_e=lambda_e, solver="nodewise",
        tol=1e-12, max_iter=2000,
    ).fit(X, sample_weight=w)  # fmt: skip
    _, J0 = zero_sum_gauge(h, J)
    assert np.allclose(potts.coupling_, J0, atol=1e-4)
    # Each site's conditional keeps its own fit's x_i-only part.
    h_kept = h + (A.mean(axis=3) - J.mean(axis=3)).sum(axis=1)
    h0, _ = zero_sum_gauge(h_kept, J)
    assert np.allclose(potts.intercept_, h0, atol=1e-4)
    again = PottsPseudoLikelihood(
        n_states=q, lambda_h=lambda_h, lambda_e=lambda_e, solver="nodewise",
        tol=1e-12, max_iter=2000, n_jobs=1,
    ).fit(X, sample_weight=w)  # fmt: skip
    assert np.array_equal(again.coupling_, potts.coupling_)


def test_group_l1_sets_the_absent_blocks_to_zero():
    from sklearn_rbm.datasets import make_potts

    X, contacts, _, _ = make_potts(3000, 14, 3, random_state=0)
    potts = PottsPseudoLikelihood(
        lambda_e=0.1, alpha=200.0, solver="proximal", tol=1e-7, max_iter=2000
    ).fit(X)
    nonzero = np.abs(potts.coupling_).sum(axis=(2, 3)) > 0
    assert np.array_equal(nonzero, contacts)


def test_group_l1_needs_the_proximal_solver():
    X, _ = _tiny_data()
    with pytest.raises(ValueError, match="solver='proximal'"):
        PottsPseudoLikelihood(alpha=1.0).fit(X)


def test_duplicated_rows_are_weights():
    X, _ = _tiny_data()
    doubled = PottsPseudoLikelihood(lambda_e=1.0, tol=1e-12).fit(np.concatenate([X, X]))
    weighted = PottsPseudoLikelihood(lambda_e=1.0, tol=1e-12).fit(
        X, sample_weight=np.full(len(X), 2.0)
    )
    assert np.allclose(doubled.coupling_, weighted.coupling_, atol=1e-6)


def test_zero_sum_gauge_keeps_the_distribution():
    rng = np.random.default_rng(3)
    layout, _, h, J = _random_model(3, 3, rng)
    h0, J0 = zero_sum_gauge(h, J)
    assert np.allclose(J0.sum(axis=2), 0) and np.allclose(J0.sum(axis=3), 0)
    assert np.allclose(J0, J0.transpose(1, 0, 3, 2))
    states = np.array(list(itertools.product(range(3), repeat=3)), dtype=np.uint8)
    diff = kernels.energies(states, h, J) - kernels.energies(states, h0, J0)
    assert np.ptp(diff) < 1e-12  # a constant shift only


def test_score_is_the_exact_log_likelihood():
    X, w = _tiny_data()
    potts = PottsPseudoLikelihood(lambda_e=1.0).fit(X, sample_weight=w)
    states = list(itertools.product(range(3), repeat=4))
    log_z = logsumexp(
        [_naive_energy(s, potts.intercept_, potts.coupling_) for s in states]
    )
    expected = [
        _naive_energy(x, potts.intercept_, potts.coupling_) - log_z for x in X[:7]
    ]
    assert np.allclose(potts.score_samples(X[:7]), expected)
    assert potts.log_partition_.method == "exact"
    # The pseudo-likelihood under its own name: sum of the site conditionals.
    x = X[0]
    manual = 0.0
    for i in range(4):
        e = [_naive_energy([*x[:i], a, *x[i + 1:]], potts.intercept_, potts.coupling_)
             for a in range(3)]  # fmt: skip
        manual += e[x[i]] - logsumexp(e)
    assert potts.pseudo_log_likelihood(X[:1])[0] == pytest.approx(manual)
    assert potts.energy(X[:1])[0] == pytest.approx(
        _naive_energy(x, potts.intercept_, potts.coupling_)
    )


def test_ais_agrees_with_enumeration():
    rng = np.random.default_rng(4)
    X = rng.integers(0, 3, size=(300, 7)).astype(np.uint8)
    X[:, 3] = X[:, 2]
    exact = PottsPseudoLikelihood(lambda_e=2.0, random_state=0).fit(X)
    ais = PottsPseudoLikelihood(
        lambda_e=2.0, score_method="ais", ais_betas=300, random_state=0
    ).fit(X)
    lz = ais.log_partition_function()
    assert lz.method == "ais"
    assert abs(lz.log_z - exact.log_partition_function().log_z) < 0.05
    assert lz.lower - 0.05 <= exact.log_partition_.log_z <= lz.upper + 0.05


def test_two_states_reach_the_fvbm_maximiser():
    """With q = 2 the Potts model is the FVBM: x = 2 v - 1, b_i = h_i(1) and
    M_ij = J_ij(1, 1) in the zero-sum gauge. The L2 penalties differ by the
    gauge (the Potts one acts on gauge-free blocks), so both are made small
    and the fitted conditionals compared."""
    spins, _, _ = make_fvbm(3000, 5, coupling_variance=0.2, random_state=0)
    v = ((spins + 1) // 2).astype(np.uint8)
    fvbm = FVBMPseudoLikelihood(alpha=1e-7, compute_std=False).fit(spins)
    potts = PottsPseudoLikelihood(lambda_h=1e-4, lambda_e=1e-4, tol=1e-14).fit(v)
    assert np.allclose(potts.intercept_[:, 1], fvbm.intercept_, atol=2e-3)
    assert np.allclose(potts.coupling_[:, :, 1, 1], fvbm.coupling_, atol=2e-3)
    states = np.array(list(itertools.product((0, 1), repeat=5)), dtype=np.uint8)
    Jt = np.ascontiguousarray(potts.coupling_.transpose(0, 1, 3, 2))
    log_cond = kernels.site_log_conditionals(states, potts.intercept_, Jt)
    s = 2.0 * states - 1.0
    field = fvbm.intercept_ + s @ fvbm.coupling_
    expected = -np.logaddexp(0, -2 * s * field)
    assert np.allclose(log_cond, expected, atol=2e-3)


def _sparse_potts(L, q, edges, rng, strength=1.2):
    h = rng.normal(0, 0.3, (L, q))
    J = np.zeros((L, L, q, q))
    for i, j in edges:
        block = rng.normal(0, strength, (q, q))
        J[i, j] = block
        J[j, i] = block.T
    return zero_sum_gauge(h, J)


def test_couplings_recovered_from_a_known_sparse_model():
    rng = np.random.default_rng(5)
    L, q = 40, 4
    perm = rng.permutation(L)
    edges = {tuple(sorted((int(perm[k]), int(perm[k + 1])))) for k in range(0, L, 2)}
    edges |= {
        tuple(sorted((int(perm[k]), int(perm[(k + 3) % L])))) for k in range(0, L, 4)
    }
    h, J = _sparse_potts(L, q, edges, rng)
    X = draw_samples(h, J, 3000, 200, 3, np.random.default_rng(0))
    potts = PottsPseudoLikelihood(n_states=q, lambda_e=1.0).fit(X)
    scores = potts.contact_scores(apc=False, include_gap=True)
    iu = np.triu_indices(L, 1)
    top = np.argsort(-scores[iu], kind="stable")[: len(edges)]
    found = {(int(iu[0][k]), int(iu[1][k])) for k in top}
    assert found == edges


def test_sampling_is_reproducible_and_follows_the_model():
    X, w = _tiny_data()
    potts = PottsPseudoLikelihood(lambda_e=1.0, random_state=0).fit(X, sample_weight=w)
    a = potts.sample(3000, burn_in=50, thinning=2)
    assert np.array_equal(a, potts.sample(3000, burn_in=50, thinning=2))
    assert a.dtype == np.uint8 and a.shape == (3000, 4)
    states = np.array(list(itertools.product(range(3), repeat=4)), dtype=np.uint8)
    p = np.exp(potts.score_samples(states))
    codes = a.astype(int) @ (3 ** np.arange(4)[::-1])
    empirical = np.bincount(codes, minlength=81) / len(a)
    assert 0.5 * np.abs(empirical - p).sum() < 0.08  # total variation


def test_samples_do_not_depend_on_the_thread_count():
    X, w = _tiny_data()
    potts = PottsPseudoLikelihood(lambda_e=1.0, random_state=0).fit(X, sample_weight=w)
    # 8,192 rows: 64 chains in two blocks, so two threads split the work.
    draws = [
        potts.set_params(n_jobs=n_jobs).sample(8192, burn_in=5, thinning=1)
        for n_jobs in (1, 2)
    ]
    assert np.array_equal(*draws)


def test_contact_scores_are_symmetric_with_zero_diagonal():
    X, w = _tiny_data()
    potts = PottsPseudoLikelihood(lambda_e=1.0).fit(X)
    for apc in (True, False):
        for gap in (True, False):
            S = potts.contact_scores(apc=apc, include_gap=gap)
            assert np.allclose(S, S.T) and np.all(np.diag(S) == 0)
    raw = potts.contact_scores(apc=False, include_gap=True)
    assert raw[0, 1] == pytest.approx(np.linalg.norm(potts.coupling_[0, 1]))
    assert np.argmax(raw[0]) == 1  # the planted coupling


def test_bad_codes_are_refused_with_clear_errors():
    X, _ = _tiny_data()
    with pytest.raises(ValueError, match="n_states=3"):
        PottsPseudoLikelihood(n_states=3).fit(np.where(X == 2, 5, X))
    with pytest.raises(ValueError, match="state codes"):
        PottsPseudoLikelihood().fit(X.astype(float) - 1)
    with pytest.raises(ValueError, match="non-integer"):
        PottsPseudoLikelihood().fit(X + 0.5)
    with pytest.raises(ValueError, match="sample_weight"):
        PottsPseudoLikelihood().fit(X, sample_weight=-np.ones(len(X)))
    potts = PottsPseudoLikelihood().fit(X)
    with pytest.raises(ValueError, match="n_states=3"):
        potts.score_samples(X + 1)
    with pytest.raises(ValueError, match="features"):
        potts.energy(X[:, :3])


def test_fit_does_not_depend_on_the_thread_count():
    X, w = _tiny_data(L=6, n=80)
    one = PottsPseudoLikelihood(n_jobs=1).fit(X, sample_weight=w)
    two = PottsPseudoLikelihood(n_jobs=2).fit(X, sample_weight=w)
    assert np.array_equal(one.coupling_, two.coupling_)
    assert np.array_equal(one.intercept_, two.intercept_)


def test_memory_is_checked_with_the_formula_in_the_message(monkeypatch):
    from sklearn_rbm._core import utils
    from sklearn_rbm._potts.estimator import _fit_memory

    monkeypatch.setattr(utils, "_machine_memory", lambda: 16 * 2**30)
    X = np.zeros((2, 1000), dtype=np.uint8)
    with pytest.raises(MemoryError, match=r"\(4 \+ history / 2\) \* L\^2 \* q\^2 \* 8"):
        PottsPseudoLikelihood(n_states=21).fit(X)
    # L = 1,000 at q = 21 fits in 24 GiB with the default solver, in 16 GiB
    # with the node-wise one.
    assert _fit_memory(20000, 1000, 21, "lbfgs", 5) < 24 * 2**30
    assert _fit_memory(20000, 1000, 21, "nodewise", 5) < 16 * 2**30


@pytest.mark.parametrize("solver", ["lbfgs", "newton", "nodewise", "proximal"])
def test_memory_estimate_bounds_the_measured_peak(solver):
    import tracemalloc

    X = np.random.default_rng(0).integers(0, 21, size=(300, 40)).astype(np.uint8)
    potts = PottsPseudoLikelihood(n_states=21, solver=solver, max_iter=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        potts.fit(X[:, :3])  # compile first
        tracemalloc.start()
        try:
            potts.fit(X)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    from sklearn_rbm._potts.estimator import _fit_memory

    estimate = _fit_memory(300, 40, 21, solver, potts.history)
    assert 0.6 * estimate < peak <= estimate


def _two_loop(S, Y, g):
    """Nocedal's two-loop recursion in float64, pairs oldest first: ``-H g``."""
    q = g.copy()
    alphas = []
    for s, y in zip(S[::-1], Y[::-1], strict=True):
        alpha = (s @ q) / (s @ y)
        q -= alpha * y
        alphas.append(alpha)
    q *= (S[-1] @ Y[-1]) / (Y[-1] @ Y[-1])
    for (s, y), alpha in zip(zip(S, Y, strict=True), alphas[::-1], strict=True):
        beta = (y @ q) / (s @ y)
        q += (alpha - beta) * s
    return -q


def test_lbfgs_direction_is_the_two_loop_recursion():
    """The vector-free direction (the new gradient's dot products, the rest
    derived from the line search, and one combination pass) equals the
    classic recursion on the same float32 pairs, slots reused as a ring,
    along iterations on a quadratic."""
    from sklearn_rbm._numerics.lbfgs import _accept_step, _combine, _Curvature

    rng = np.random.default_rng(7)
    n, m = 1000, 3
    A = rng.normal(size=(n, 20))
    b = rng.normal(size=n)

    def gradient(x):  # of 0.5 x (A A^T + 0.1) x - b x: positive definite
        return A @ (A.T @ x) + 0.1 * x - b

    S = np.zeros((m, n), dtype=np.float32)
    Y = np.zeros((m, n), dtype=np.float32)
    x = rng.normal(size=n)
    g = gradient(x)
    d = np.empty(n, dtype=np.float32)
    curvature = _Curvature(m)
    curvature.set_gradient_norm(g @ g)
    kept = []
    for step in (0.01, 0.5, 0.7, 0.9, 1.1):  # more pairs than slots
        coef, slope = curvature.direction()
        _combine(coef[:m], coef[m:-1], coef[-1], S, Y, g, d)
        if kept:
            expected = _two_loop(S[kept].astype(float), Y[kept].astype(float), g)
            tol = 1e-5 * np.abs(expected).max()
            assert np.allclose(d, expected, rtol=1e-5, atol=tol)
            assert slope == pytest.approx(g @ expected, rel=1e-5)
        g_new = gradient(x + step * d.astype(float))
        slot = curvature.next_slot()
        g_dots = _accept_step(x, d, step, g, g_new, S, Y, slot)
        curvature.push(slot, step, coef, slope, float(g_new @ d), g_dots)
        kept = [*kept, slot][-m:]
        g = g_new
    assert len(kept) == m and curvature.order == kept
    # The derived products describe the stored pairs.
    pairs = np.vstack([S, Y, g[None]]).astype(float)
    assert np.allclose(curvature.gram, pairs @ pairs.T, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("weight", [1.0, 1e40])
def test_float32_gradients_only_where_float32_holds_them(weight):
    """L-BFGS keeps float32 gradients for moderate weights; weights whose
    gradients would overflow float32 keep them in float64 (a fourth state
    that never occurs has the penalty's small curvature and a large scale,
    and its conditional probability times the weights is its gradient), and
    the gradient the solver stores is finite and equals the float64 one."""
    X, w = _tiny_data()
    w = w * weight
    layout = PairLayout(X.shape[1], 4)
    objective = PseudoLikelihoodObjective(X, w, layout, 0.01, 0.1, np.float32)
    scaled = Preconditioned(objective, diagonal_preconditioner(X, w, layout, 0.01, 0.1))
    expected = np.float32 if weight == 1.0 else np.float64
    assert scaled.gradient_dtype == expected
    x = np.random.default_rng(0).normal(size=layout.size)
    d = np.zeros(layout.size, dtype=np.float32)
    grad = np.empty(layout.size, dtype=scaled.gradient_dtype)
    wide = np.empty(layout.size)
    scaled(x, d, 0.0, grad)
    scaled(x, d, 0.0, wide)
    assert np.all(np.isfinite(grad))
    np.testing.assert_allclose(grad, wide, rtol=1e-6, atol=1e-6 * np.abs(wide).max())


def test_lbfgs_reaches_scipys_minimum_deterministically():
    from sklearn_rbm._numerics.lbfgs import lbfgs

    rng = np.random.default_rng(8)
    Z, labels = rng.normal(size=(200, 30)), rng.random(200) < 0.5

    def loss(x):  # penalised logistic regression: smooth, strictly convex
        margin = np.where(labels, 1.0, -1.0) * (Z @ x)
        value = np.logaddexp(0.0, -margin).sum() + 0.5 * x @ x
        weights = -np.where(labels, 1.0, -1.0) / (1.0 + np.exp(margin))
        return value, Z.T @ weights + x

    def evaluate(x, d, t, grad):
        value, grad[:] = loss(x + t * d)
        return value, float(grad @ d)

    runs = [
        lbfgs(evaluate, np.zeros(30), 5, 200, 1000, lambda it, v: False)
        for _ in range(2)
    ]
    reference = scipy.optimize.minimize(
        loss, np.zeros(30), jac=True, method="BFGS", options={"gtol": 1e-10}
    )
    assert runs[0].fun == pytest.approx(reference.fun, rel=1e-12)
    assert np.allclose(runs[0].x, reference.x, atol=1e-5)
    assert runs[0].status == "line_search"  # converged: no step lowers it
    assert np.array_equal(runs[0].x, runs[1].x)


# ------------------------------------------- convergence as reached (issue 35)
@pytest.mark.parametrize("solver", ["lbfgs", "newton", "nodewise", "proximal"])
@pytest.mark.parametrize("penalty", [1e200, 1e300])
def test_convergence_is_reported_only_at_the_minimum(solver, penalty):
    """Under extreme penalties the minimum is h = J = 0, whose objective is
    the uniform model's n L log q. A fit that reports convergence (no
    ConvergenceWarning) must be there; a line search that fails far from
    it, or a proximal step below the parameters' rounding that still
    promises most of the objective, is no convergence."""
    X, _ = _tiny_data()
    uniform = X.shape[0] * X.shape[1] * np.log(3)
    alpha = 1.0 if solver == "proximal" else 0.0
    potts = PottsPseudoLikelihood(
        lambda_h=penalty, lambda_e=penalty, alpha=alpha, solver=solver
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        potts.fit(X)
    warned = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    if not warned:
        assert potts.objective_ == pytest.approx(uniform, rel=1e-6)
    elif potts.n_iter_ < potts.max_iter:
        assert "no step lowered the objective" in str(warned[0].message)


_PROXIMAL_TOL_ZERO = """
import numpy as np, warnings
from sklearn_rbm import PottsPseudoLikelihood
rng = np.random.default_rng(0)
X = rng.integers(0, 3, size=(60, 4))
X[:, 1] = np.where(rng.random(60) < 0.7, X[:, 0], X[:, 1])
warnings.simplefilter("ignore")
potts = PottsPseudoLikelihood(lambda_e=1.0, alpha=1.0, solver="proximal", tol=0.0,
                              max_iter=10**9).fit(X)
print(potts.n_iter_)
"""


def test_proximal_with_tol_zero_stops_when_it_cannot_progress():
    """tol=0 and max_iter=10**9: FISTA stops where a plain proximal step
    cannot lower the total (it restarted from the same point for ever)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    done = subprocess.run(
        [sys.executable, "-c", _PROXIMAL_TOL_ZERO],
        env={**os.environ, "PYTHONPATH": root},
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert 0 < int(done.stdout.split()[-1]) < 10**9
