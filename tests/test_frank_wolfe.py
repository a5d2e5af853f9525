"""FrankWolfeRBM: the sub-problem against finite differences, the likelihood
against exact enumeration, the behaviour on digits that Ping, Liu & Ihler
(2016) report, early stopping where the right size is known, defaults on
digits, warm starts and fine-tuning, and bad input. (The generic properties --
bit-identity across processes, float32, sparse and memory-mapped input,
persistence -- run in tests/test_common.py.)"""

import itertools
import signal

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import logsumexp
from sklearn.exceptions import ConvergenceWarning, NotFittedError

from sklearn_rbm import FrankWolfeRBM
from sklearn_rbm._frank_wolfe import growth
from sklearn_rbm._frank_wolfe.growth import _best_unit, _SubProblem
from sklearn_rbm._rbm.bernoulli import DCPBernoulliRBM
from sklearn_rbm.datasets import load_binary_digits, make_bars_and_stripes
from sklearn_rbm.likelihood import base_rate_bias

TINY = dict(n_samples_per_step=200, n_gibbs_steps=5, n_bias_steps=5)


@pytest.fixture(scope="module")
def digits():
    return load_binary_digits()[0]


@pytest.fixture(scope="module")
def bars():
    return make_bars_and_stripes(300, random_state=0)


def exact_mean_log_likelihood(X, W, b, c):
    """Mean log p(v) of a tiny RBM by enumerating every visible state."""
    V = np.array(list(itertools.product([0.0, 1.0], repeat=X.shape[1])))
    log_z = logsumexp(V @ b + np.logaddexp(0.0, V @ W.T + c).sum(axis=1))
    free = X @ b + np.logaddexp(0.0, X @ W.T + c).sum(axis=1)
    return float(np.mean(free) - log_z)


# ------------------------------------------------------------ sub-problem
def subproblem_rows(rng, n_data=30, n_samples=20, n_visible=8):
    data = (rng.random((n_data, n_visible)) < 0.3).astype(float)
    samples = (rng.random((n_samples, n_visible)) < 0.6).astype(float)
    rows = np.ones((n_data + n_samples, n_visible + 1))
    rows[:n_data, :n_visible], rows[n_data:, :n_visible] = data, samples
    coef = np.r_[np.full(n_data, -1.0 / n_data), np.full(n_samples, 1.0 / n_samples)]
    return rows, coef, data, samples


def test_subproblem_value_is_eq9():
    """alpha/2 |w|^2 + mean_s softplus(w.v~_s) - mean_n softplus(w.v~_n)."""
    rng = np.random.default_rng(0)
    rows, coef, data, samples = subproblem_rows(rng)
    w = rng.standard_normal(9)
    value, _ = _SubProblem(rows, coef, 0.3)(w)
    expected = (
        0.15 * w @ w
        + np.logaddexp(0.0, samples @ w[:8] + w[8]).mean()
        - np.logaddexp(0.0, data @ w[:8] + w[8]).mean()
    )
    assert value == pytest.approx(expected, abs=1e-12)
    assert _SubProblem(rows, coef, 0.3)(np.zeros(9))[0] == pytest.approx(0, abs=1e-14)


def test_sparse_rows_give_the_dense_subproblem():
    rng = np.random.default_rng(2)
    rows, coef, _, _ = subproblem_rows(rng)
    w = rng.standard_normal(9)
    dense = _SubProblem(rows, coef, 0.2)(w)
    sparse = _SubProblem(sp.csr_matrix(rows), coef, 0.2)(w)
    assert sparse[0] == pytest.approx(dense[0], abs=1e-13)
    np.testing.assert_allclose(sparse[1], dense[1], atol=1e-13)


def test_subproblem_gradient_matches_finite_differences():
    rng = np.random.default_rng(1)
    rows, coef, _, _ = subproblem_rows(rng)
    problem = _SubProblem(rows, coef, 0.1)
    for _ in range(3):
        w = 2.0 * rng.standard_normal(9)
        _, gradient = problem(w)
        step = 1e-6
        numeric = [
            (problem(w + step * e)[0] - problem(w - step * e)[0]) / (2 * step)
            for e in np.eye(9)
        ]
        np.testing.assert_allclose(gradient, numeric, rtol=1e-6, atol=1e-8)


# ------------------------------------------------ likelihood on tiny models
def test_exact_log_likelihood_rises_over_the_first_steps(bars):
    """On 9-pixel bars & stripes, the exact training log-likelihood of the
    model after each of the first steps rises above the base-rate model."""
    scores = []
    for size in range(1, 6):
        fw = FrankWolfeRBM(
            max_components=size, alpha=0.03, validation_fraction=None,
            n_samples_per_step=1000, random_state=0,
        ).fit(bars)  # fmt: skip
        params = (fw.components_, fw.intercept_visible_, fw.intercept_hidden_)
        scores.append(exact_mean_log_likelihood(bars, *params))
        assert fw.score(bars) == pytest.approx(scores[-1], abs=1e-9)
    b = base_rate_bias(bars)
    independent = float(np.mean(bars @ b) - np.logaddexp(0.0, b).sum())
    assert scores[0] > independent
    # Monotone up to the Monte Carlo noise of the bias steps (0.01 nats).
    assert np.all(np.diff(scores) > -0.01)
    assert scores[-1] > independent + 0.2


def test_smaller_fits_are_prefixes_of_larger_ones(bars):
    """Step t does not depend on max_components: a fit to T units contains
    the fit to T - 2 units (the same random_state, bit for bit)."""
    params = dict(alpha=0.03, validation_fraction=None, random_state=3, **TINY)
    small = FrankWolfeRBM(max_components=3, **params).fit(bars)
    large = FrankWolfeRBM(max_components=5, **params).fit(bars)
    np.testing.assert_array_equal(small.components_, large.components_[:3])


def test_training_gain_estimates_the_exact_change(bars):
    """history_['training_gain'] estimates the change of the exact mean
    training log-likelihood over each step (unit and bias steps together)."""
    params = dict(
        alpha=0.03, validation_fraction=None, n_samples_per_step=4000,
        n_gibbs_steps=20, n_bias_steps=20, random_state=0,
    )  # fmt: skip
    b = base_rate_bias(bars)
    exact = [float(np.mean(bars @ b) - np.logaddexp(0.0, b).sum())]
    for size in (1, 2, 3):  # each fit is a prefix of the next (tested above)
        fw = FrankWolfeRBM(max_components=size, **params).fit(bars)
        W, b, c = fw.components_, fw.intercept_visible_, fw.intercept_hidden_
        exact.append(exact_mean_log_likelihood(bars, W, b, c))
    np.testing.assert_allclose(fw.history_["training_gain"], np.diff(exact), atol=0.02)


# ------------------------------- digits, as Ping, Liu & Ihler (2016) report
@pytest.fixture(scope="module")
def digits_fit(digits):
    return FrankWolfeRBM(
        max_components=30, alpha=0.1, n_samples_per_step=300,
        validation_fraction=0.3, early_stopping=False, score_every=5,
        score_method="ais", ais_betas=300, random_state=0,
    ).fit(digits)  # fmt: skip


def test_digits_objective_and_held_out_likelihood_behave_as_in_the_paper(digits_fit):
    """Ping, Liu & Ihler (2016), Sec. 3.2 and Fig. 1, at smoke size: every
    inserted unit improves the linearised objective (their Eq. (9) below 0), its
    improvements shrink as the model approaches the data, the held-out
    likelihood rises above the base-rate model, and the train / held-out
    free-energy gap grows."""
    history = digits_fit.history_
    assert np.all(history["objective"] < 0)
    assert np.all((history["scale"] > 0) & (history["scale"] <= 1))
    assert np.mean(history["objective"][-10:]) > np.mean(history["objective"][:10])
    scored = ~np.isnan(history["validation_log_likelihood"])
    assert list(history["n_components"][scored]) == [5, 10, 15, 20, 25, 30]
    curve = history["validation_log_likelihood"][scored]
    assert curve[-1] > curve[0]
    gap = history["free_energy_gap"]
    assert np.mean(gap[-5:]) > np.mean(gap[:5])


def test_selected_size_is_the_best_scored_one(digits_fit):
    history = digits_fit.history_
    scored = ~np.isnan(history["validation_log_likelihood"])
    best = np.argmax(history["validation_log_likelihood"][scored])
    assert digits_fit.n_components_ == history["n_components"][scored][best]
    assert digits_fit.components_.shape == (digits_fit.n_components_, 64)
    assert digits_fit.n_iter_ == 30
    # Every size on the path is available; the selected one is the fit itself.
    same = digits_fit.submodel(digits_fit.n_components_)
    np.testing.assert_array_equal(same.components_, digits_fit.components_)
    np.testing.assert_array_equal(
        same.intercept_visible_, digits_fit.intercept_visible_
    )
    last = digits_fit.submodel(30)
    assert last.components_.shape == (30, 64) and digits_fit.n_components_ <= 30
    with pytest.raises(ValueError, match="n_components=31 was not reached"):
        digits_fit.submodel(31)


def free_energies(X, W, b, c):
    """``F(v) = -b.v - sum_j softplus(W_j.v + c_j)`` of each row."""
    return -(X @ b) - np.logaddexp(0.0, X @ W.T + c).sum(axis=1)


def kept_and_stopped(values, tol, patience, relative=0.05):
    """The early-stopping rule as documented, written out: a value improves
    when it beats the best by more than ``max(tol, relative * best)`` (the
    criterion starts at 0); returns the index kept and the number of values
    read before stopping."""
    best, kept, stale = None, None, 0
    for index, value in enumerate(values, 1):
        threshold = 0.0 if best is None else max(tol, relative * max(best, 0.0))
        if best is None or value - best > threshold:
            best, kept, stale = value, index, 0
        else:
            stale += 1
            if stale == patience:
                return kept, index
    return kept, len(values)


@pytest.mark.parametrize("early_stopping", [True, False])
def test_gap_rule_selects_the_best_cumulative_held_out_gain(
    digits, early_stopping, monkeypatch
):
    """Without score_every and with no threshold, the size maximises the
    free-energy estimate of the held-out log-likelihood change, and growth
    stops n_iter_no_change units after its maximum (or at max_components)."""
    monkeypatch.setattr(growth, "_RELATIVE_TOL", 0.0)
    X_train, X_val = digits[:100], digits[100:200]
    fw = FrankWolfeRBM(
        max_components=40, alpha=0.02, early_stopping=early_stopping,
        n_iter_no_change=3, tol=0.0, random_state=0, **TINY,
    ).fit(X_train, X_val=X_val)  # fmt: skip
    history = fw.history_
    cumulative = np.cumsum(history["validation_gain"])
    assert fw.n_components_ == history["n_components"][np.argmax(cumulative)]
    if early_stopping:
        assert fw.n_iter_ in (fw.n_components_ + 3, 40)
    else:
        assert fw.n_iter_ == 40
    # The estimate is the training gain minus the growth of the free-energy
    # gap; the gap of every size is recomputed here from that size's model.
    sizes, gaps = history["n_components"], history["free_energy_gap"]
    for size, gap in zip(sizes, gaps, strict=True):
        model = fw.submodel(size)
        params = model.components_, model.intercept_visible_, model.intercept_hidden_
        direct = free_energies(X_val, *params).mean()
        direct -= free_energies(X_train, *params).mean()
        assert gap == pytest.approx(direct, rel=1e-9, abs=1e-9)


def test_gap_rule_counts_only_improvements_above_the_thresholds(digits):
    """With the default thresholds (tol and 5% of the gain so far) the kept
    size and the stop follow the documented rule; here the last, small rises
    of the cumulative gain (under 5% of it) did not count."""
    fw = FrankWolfeRBM(
        max_components=60, alpha=0.02, n_iter_no_change=5, random_state=0, **TINY
    ).fit(digits[:300], X_val=digits[300:600])
    cumulative = np.cumsum(fw.history_["validation_gain"])
    kept, stopped = kept_and_stopped(cumulative, tol=0.01, patience=5)
    assert (fw.n_components_, fw.n_iter_) == (kept, stopped)
    assert stopped < 60
    assert kept < 1 + np.argmax(cumulative)


# ------------------------------------ early stopping where the answer is known
@pytest.fixture
def hang_guard():
    """Fail instead of hanging: a fit with defaults past 60 s raises (speed
    itself is measured by benchmarks/bench_defaults.py)."""

    def expire(signum, frame):
        raise TimeoutError("a fit with default settings ran past 60 s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def test_independent_pixels_stop_growth_at_once(hang_guard):
    """Pixels drawn independently: no unit can help, so growth stops after
    the first unit plus the patience, and the kept model is the base-rate
    model's equal on held-out data (exact likelihoods)."""
    rng = np.random.default_rng(0)
    p = rng.uniform(0.1, 0.9, 12)
    X, X_val = (rng.random((2000, 12)) < p), (rng.random((1000, 12)) < p)
    X, X_val = X.astype(float), X_val.astype(float)
    fw = FrankWolfeRBM(max_components=40, random_state=0).fit(X, X_val=X_val)
    assert fw.n_iter_ == 1 + fw.n_iter_no_change and fw.n_components_ == 1
    params = fw.components_, fw.intercept_visible_, fw.intercept_hidden_
    independent = np.mean(X_val @ np.log(p) + (1 - X_val) @ np.log(1 - p))
    kept = exact_mean_log_likelihood(X_val, *params)
    assert kept == pytest.approx(independent, abs=0.01)


def test_growth_stops_where_the_exact_held_out_curve_flattens(hang_guard):
    """Three noisy prototypes on 12 pixels: the exact held-out likelihood
    rises by about 1.2 nats over the first units, then flattens. Growth stops
    well before max_components, keeping most of what 60 units reach."""
    rng = np.random.default_rng(0)
    prototypes = (rng.random((3, 12)) < 0.5).astype(float)

    def draw(n):
        X = prototypes[rng.integers(3, size=n)]
        return np.abs(X - (rng.random(X.shape) < 0.05))

    X, X_val, X_test = draw(1000), draw(1000), draw(2000)
    params = dict(max_components=60, random_state=0)
    stopped = FrankWolfeRBM(**params).fit(X, X_val=X_val)
    grown = FrankWolfeRBM(early_stopping=False, **params).fit(X, X_val=X_val)

    def test_log_likelihood(fw, size):
        model = fw.submodel(size)
        return exact_mean_log_likelihood(
            X_test, model.components_, model.intercept_visible_,
            model.intercept_hidden_,
        )  # fmt: skip

    # Early stopping only truncates the growth: the same path.
    kept = stopped.n_components_
    np.testing.assert_array_equal(stopped.components_, grown.submodel(kept).components_)
    assert stopped.n_iter_ < 45
    base, at_kept, at_60 = (test_log_likelihood(grown, k) for k in (0, kept, 60))
    assert at_60 - base > 1.0  # the curve rises ...
    assert at_kept - base > 0.9 * (at_60 - base)  # ... and the stop keeps most of it


def test_defaults_on_binarised_digits_stop_far_below_max_components(digits, hang_guard):
    """Issue 22: with defaults on digits growth used to run to 99 of 100
    units. The held-out curve flattens (each unit adds under 0.01 nats after
    about 50), and early stopping now fires there; the model is still far
    better than the base rate on unseen digits (AIS)."""
    X, X_test = digits[:1500], digits[1500:]
    fw = FrankWolfeRBM(random_state=0).fit(X)
    assert fw.n_iter_ < 80 and fw.n_components_ <= 60
    p = np.clip(X.mean(axis=0), 1e-3, 1 - 1e-3)
    base_rate = np.mean(X_test @ np.log(p) + (1 - X_test) @ np.log(1 - p))
    assert fw.score(X_test) > base_rate + 1.5


def test_literal_unit_scale_overshoots_where_the_line_search_does_not(bars):
    """Ping, Liu & Ihler's (2016) alpha_t = t inserts every unit whole; on 9
    pixels with a weak penalty that lowers the exact likelihood far below the base-rate
    model, while the line search on the unit scale raises it."""
    params = dict(
        max_components=3, alpha=0.01, validation_fraction=None, random_state=0,
        n_samples_per_step=1000,
    )  # fmt: skip
    literal = FrankWolfeRBM(unit_scale="one", **params).fit(bars)
    searched = FrankWolfeRBM(**params).fit(bars)
    assert np.all(literal.history_["scale"] == 1.0)
    b = base_rate_bias(bars)
    independent = float(np.mean(bars @ b) - np.logaddexp(0.0, b).sum())
    assert literal.score(bars) < independent - 5.0
    assert searched.score(bars) > independent


# --------------------------------------------------------- warm starts
def test_warm_start_grows_an_existing_rbm(digits):
    cd = DCPBernoulliRBM(n_components=4, solver="cd", n_iter=2, random_state=0)
    cd.fit(digits)
    fw = FrankWolfeRBM(
        max_components=7, init=cd, validation_fraction=None, random_state=0, **TINY
    ).fit(digits)
    assert fw.n_components_ == 7
    np.testing.assert_allclose(fw.components_[:4], cd.components_)
    np.testing.assert_allclose(fw.intercept_hidden_[:4], cd.intercept_hidden_)
    assert list(fw.history_["n_components"]) == [5, 6, 7]


def test_warm_start_errors(digits):
    cd = DCPBernoulliRBM(n_components=4, n_iter=1, random_state=0).fit(digits)
    with pytest.raises(ValueError, match="init was fitted on 64 features but X has 10"):
        FrankWolfeRBM(init=cd).fit(digits[:, :10])
    with pytest.raises(ValueError, match="max_components > 4"):
        FrankWolfeRBM(max_components=4, init=cd).fit(digits)


def test_fine_tune_is_cd_initialised_by_frank_wolfe(digits):
    fw = FrankWolfeRBM(
        max_components=5, validation_fraction=None, random_state=0, **TINY
    ).fit(digits)
    start = fw.fine_tune(digits, n_iter=0)
    assert isinstance(start, DCPBernoulliRBM) and start.solver == "cd"
    np.testing.assert_allclose(start.components_, fw.components_)
    np.testing.assert_allclose(start.intercept_visible_, fw.intercept_visible_)
    tuned = fw.fine_tune(digits, n_iter=2, learning_rate=0.01, random_state=0)
    one_liner = DCPBernoulliRBM(
        n_components=fw.n_components_, solver="cd", init=fw, n_iter=2,
        learning_rate=0.01, random_state=0,
    ).fit(digits)  # fmt: skip
    np.testing.assert_array_equal(tuned.components_, one_liner.components_)


# ------------------------------------------------- scikit-learn surface
def test_samples_are_binary_and_there_is_no_partial_fit(digits):
    """(float32 against float64 is a generic property: tests/test_common.py.)"""
    fw = FrankWolfeRBM(
        max_components=6, validation_fraction=None, random_state=0, **TINY
    ).fit(digits)
    samples = fw.sample(3, n_steps=10)
    assert samples.shape == (3, 64) and set(np.unique(samples)) <= {0.0, 1.0}
    assert not hasattr(fw, "partial_fit")


def test_csr_subproblem_rows_give_the_dense_path(monkeypatch):
    """Sparse binary data (10% ones) take the CSR sub-problem; forcing dense
    rows gives the same units up to rounding, and the CSR path is itself
    reproducible bit for bit."""
    rng = np.random.default_rng(0)
    X = (rng.random((300, 60)) < 0.1).astype(float)
    params = dict(max_components=3, alpha=0.05, random_state=0, **TINY)
    first = FrankWolfeRBM(**params).fit(X)
    again = FrankWolfeRBM(**params).fit(X)
    np.testing.assert_array_equal(first.components_, again.components_)
    monkeypatch.setattr("sklearn_rbm._frank_wolfe.growth._SPARSE_DENSITY", 0.0)
    dense = FrankWolfeRBM(**params).fit(X)
    np.testing.assert_allclose(dense.components_, first.components_, atol=1e-6)


def test_verbose_reports_each_unit(digits, capsys):
    FrankWolfeRBM(
        max_components=2, early_stopping=False, verbose=1, random_state=0, **TINY
    ).fit(digits)
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 2 and "unit 2" in lines[1] and "free-energy gap" in lines[1]


# ------------------------------------------------------------ bad input
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_input_is_rejected(bad, digits):
    X = digits[:50].copy()
    X[3, 7] = bad
    with pytest.raises(ValueError, match="NaN|infinity"):
        FrankWolfeRBM().fit(X)


def test_wrong_number_of_features_at_query_time(digits):
    fw = FrankWolfeRBM(max_components=2, random_state=0, **TINY).fit(digits)
    for method in (fw.transform, fw.score, fw.score_samples, fw.gibbs):
        with pytest.raises(
            ValueError, match="63 features, but FrankWolfeRBM is expecting 64"
        ):
            method(digits[:, :63])


def test_empty_and_single_sample_input(digits):
    with pytest.raises(ValueError, match="0 sample"):
        FrankWolfeRBM().fit(digits[:0])
    with pytest.raises(ValueError, match="n_samples=1 leaves 0 for validation"):
        FrankWolfeRBM().fit(digits[:1])
    one = FrankWolfeRBM(
        max_components=2, validation_fraction=None, random_state=0, **TINY
    ).fit(digits[:1])
    # The base-rate start makes the one row nearly certain (exact likelihood,
    # two hidden units) and any other row nearly impossible.
    assert one.score(digits[:1]) > -1.0
    assert one.score(digits[1:2]) < -100.0


@pytest.mark.parametrize(
    "params, message",
    [
        ({"max_components": 0}, "max_components"),
        ({"alpha": 0.0}, "alpha"),
        ({"validation_fraction": 1.5}, "validation_fraction"),
        ({"unit_scale": "half"}, "unit_scale"),
        ({"n_samples_per_step": 0}, "n_samples_per_step"),
        ({"learning_rate": 0.1}, "learning_rate"),  # unknown: the name is eta's
    ],
)
def test_invalid_hyperparameters(params, message, digits):
    with pytest.raises((ValueError, TypeError), match=message):
        FrankWolfeRBM(**params).fit(digits)


def test_validation_fraction_that_leaves_no_training_data(digits):
    with pytest.raises(ValueError, match="leaves 4 for validation and 0 for training"):
        FrankWolfeRBM(validation_fraction=0.9).fit(digits[:4])


def test_exact_score_on_a_model_too_large_to_enumerate():
    rng = np.random.default_rng(0)
    X = (rng.random((60, 40)) < 0.5).astype(float)
    fw = FrankWolfeRBM(
        max_components=32, alpha=0.01, score_method="exact",
        validation_fraction=None, random_state=0, **TINY,
    ).fit(X)  # fmt: skip
    assert fw.n_components_ == 32
    with pytest.raises(ValueError, match="2 \\*\\* 32 states.*Use score_method='ais'"):
        fw.score(X)


def test_diverging_bias_steps_raise_and_keep_finite_parameters(digits):
    fw = FrankWolfeRBM(
        max_components=5, visible_learning_rate=1e12, random_state=0, **TINY
    )
    with pytest.raises(FloatingPointError, match="visible_learning_rate=1e\\+12"):
        fw.fit(digits)
    assert np.all(np.isfinite(fw.intercept_visible_))
    assert np.abs(fw.intercept_visible_).max() < 1e8


def test_unconverged_subproblem_warns_and_inserts_only_improving_units(digits):
    with pytest.warns(ConvergenceWarning, match="lbfgs_max_iter=1"):
        fw = FrankWolfeRBM(
            max_components=4, lbfgs_max_iter=1, validation_fraction=None,
            random_state=0, **TINY,
        ).fit(digits)  # fmt: skip
    assert np.all(fw.history_["objective"] < 0)
    assert fw.n_components_ == len(fw.history_["objective"])


def _few_prototypes(n_features, n_samples=100):
    """Noisy copies of 4 binary prototypes: in many dimensions the data and
    the model's samples are separable, and at a small ``alpha`` the
    sub-problem's unit is huge (norms in the thousands)."""
    rs = np.random.RandomState(0)
    prototypes = rs.rand(4, n_features) < 0.3
    copies = prototypes[rs.randint(4, size=n_samples)]
    return (copies ^ (rs.rand(n_samples, n_features) < 0.05)).astype(np.float64)


def test_small_alpha_does_not_wreck_the_likelihood():
    """The sample estimate of log Z_t / Z_(t-1) misses the mass of a unit
    whose active region no chain reaches. Before the data bound and the
    rejection of such units, these 6 steps took the exact log-likelihood
    from -53.2 to -5015.2; now every size scores above the start."""
    X = _few_prototypes(100)
    fw = FrankWolfeRBM(
        max_components=6, alpha=1e-3, n_samples_per_step=100,
        validation_fraction=None, score_method="exact", random_state=0,
    ).fit(X)  # fmt: skip
    scores = [fw.submodel(k).score(X) for k in range(fw.n_iter_ + 1)]
    assert fw.n_iter_ == 6
    assert min(scores[1:]) > scores[0]
    assert scores[-1] > scores[0] + 5.0


def test_growth_stops_with_a_warning_when_every_unit_is_rejected():
    """In 400 dimensions every unit lowers the estimated likelihood even
    shrunk 64-fold: none is inserted, and after 3 such steps growth stops
    with a warning that says why and what to change."""
    X = _few_prototypes(400)
    with pytest.warns(ConvergenceWarning, match="stopped growing at 0 hidden.*alpha"):
        fw = FrankWolfeRBM(
            max_components=6, alpha=1e-3, n_samples_per_step=100,
            validation_fraction=None, random_state=0,
        ).fit(X)  # fmt: skip
    assert fw.n_components_ == 0 and fw.n_iter_ == 0
    b = base_rate_bias(X)  # the starting model: independent pixels
    assert fw.score(X) == pytest.approx(np.mean(X @ b) - np.logaddexp(0, b).sum())


def test_no_unit_is_returned_when_none_improves_the_objective():
    """When the samples equal the data, Eq. 9 is alpha/2 |w|^2 >= 0: no unit
    improves on w = 0, whether L-BFGS converged or not."""
    rng = np.random.default_rng(0)
    _, _, data, _ = subproblem_rows(rng)
    rows = np.ones((60, 9))
    rows[:30, :8] = rows[30:, :8] = data
    coef = np.r_[np.full(30, -1.0 / 30), np.full(30, 1.0 / 30)]
    problem = _SubProblem(rows, coef, 0.1)
    starts = rng.normal(0.0, 1.0, (2, 9))
    assert _best_unit(problem, starts, 100, 1e-8, 1)[0] is None
    with pytest.warns(ConvergenceWarning, match="unit 7"):
        w, value = _best_unit(problem, starts, 1, 1e-12, 7)
    assert w is None and value > 0
    # Different samples: a unit improves and is returned.
    rows[30:, :8] = 1.0 - data
    w, value = _best_unit(problem, starts, 100, 1e-8, 1)
    assert value < 0 and problem(w)[0] == pytest.approx(value)


def test_fit_stops_when_no_unit_improves(digits, monkeypatch):
    """If the first sub-problem has no improving unit, Frank-Wolfe has
    converged at once: the model is the base-rate one, with no hidden unit,
    and every query still works."""
    monkeypatch.setattr(
        "sklearn_rbm._frank_wolfe.growth._best_unit", lambda *args: (None, 0.0)
    )
    fw = FrankWolfeRBM(
        max_components=3, validation_fraction=None, random_state=0, **TINY
    ).fit(digits)
    assert fw.n_components_ == 0 and fw.n_iter_ == 0
    assert fw.transform(digits[:2]).shape == (2, 0)
    np.testing.assert_array_equal(fw.intercept_visible_, base_rate_bias(digits))
    independent = (
        np.mean(digits @ fw.intercept_visible_)
        - np.logaddexp(0.0, fw.intercept_visible_).sum()
    )
    assert fw.score(digits) == pytest.approx(independent, abs=1e-9)
    assert fw.sample(2, n_steps=2).shape == (2, 64)


def test_not_fitted():
    with pytest.raises(NotFittedError):
        FrankWolfeRBM().transform(np.zeros((2, 3)))
    with pytest.raises(NotFittedError):
        FrankWolfeRBM().fine_tune(np.zeros((2, 3)))
