"""The inference module against brute-force enumeration of both layers."""

import itertools

import numpy as np
import pytest
from scipy.special import logsumexp

from sklearn_rbm.inference import (
    belief_propagation,
    bethe_log_partition,
    exact_log_partition,
    exact_marginals,
    mean_field,
)
from sklearn_rbm.likelihood import log_partition_exact


class BruteForce:
    """Every joint state ``(v, h)`` of a tiny RBM and its log-probability."""

    def __init__(self, W, b, c):
        n_hidden, n_visible = W.shape
        self.V = np.array(list(itertools.product([0.0, 1.0], repeat=n_visible)))
        self.H = np.array(list(itertools.product([0.0, 1.0], repeat=n_hidden)))
        # log_p[h_state, v_state] = -E(v, h) - log Z
        scores = self.H @ W @ self.V.T + (self.V @ b)[None, :] + (self.H @ c)[:, None]
        self.log_z = logsumexp(scores)
        self.log_p = scores - self.log_z
        p = np.exp(self.log_p)
        self.visible = p.sum(axis=0) @ self.V
        self.hidden = p.sum(axis=1) @ self.H
        self.pairwise = self.H.T @ p @ self.V  # E[h v^T]

    def joint_map(self):
        h, v = np.unravel_index(self.log_p.argmax(), self.log_p.shape)
        return self.V[v], self.H[h]

    def marginal_map_scores(self):
        """``log sum_h p(v, h)`` of every visible state."""
        return logsumexp(self.log_p, axis=0)


def random_rbm(seed, n_hidden, n_visible, scale=1.0, bias_scale=1.0):
    rng = np.random.default_rng(seed)
    return (
        scale * rng.standard_normal((n_hidden, n_visible)),
        bias_scale * rng.standard_normal(n_visible),
        bias_scale * rng.standard_normal(n_hidden),
    )


def singleton_error(result, truth):
    return max(
        np.abs(result.visible - truth.visible).max(),
        np.abs(result.hidden - truth.hidden).max(),
    )


# --- the brute-force helpers of the module -------------------------------------


@pytest.mark.parametrize("n_hidden, n_visible", [(1, 6), (3, 5), (6, 3), (4, 4)])
def test_exact_marginals_equal_full_enumeration(n_hidden, n_visible):
    W, b, c = random_rbm(n_hidden * 10 + n_visible, n_hidden, n_visible, scale=2.0)
    truth = BruteForce(W, b, c)
    exact = exact_marginals(W, b, c)
    np.testing.assert_allclose(exact.visible, truth.visible, rtol=0, atol=1e-12)
    np.testing.assert_allclose(exact.hidden, truth.hidden, rtol=0, atol=1e-12)
    np.testing.assert_allclose(exact.pairwise, truth.pairwise, rtol=0, atol=1e-12)
    assert exact.log_partition == pytest.approx(truth.log_z, abs=1e-10)
    assert exact_log_partition(W, b, c) == pytest.approx(truth.log_z, abs=1e-10)


def test_exact_log_partition_batched_equals_log_partition_exact():
    W, _, c = random_rbm(0, 7, 4)
    B1 = np.random.default_rng(1).standard_normal((3, 4))
    log_z = exact_log_partition(W, B1, c)
    assert log_z.shape == (3,)
    for row, value in zip(B1, log_z, strict=True):
        assert value == pytest.approx(log_partition_exact(W, row, c), abs=1e-10)
    batched = exact_marginals(W, B1, c)
    np.testing.assert_allclose(batched.log_partition, log_z, rtol=0, atol=1e-10)


def test_exact_inference_refuses_large_models():
    with pytest.raises(ValueError, match="limited to 20 units"):
        exact_marginals(np.zeros((21, 25)), np.zeros(25), np.zeros(21))
    with pytest.raises(ValueError, match="limited to 20 units"):
        exact_log_partition(np.zeros((25, 21)), np.zeros(21), np.zeros(25))


# --- BP is exact on trees ------------------------------------------------------


@pytest.mark.parametrize("scale", [1.0, 5.0])
@pytest.mark.parametrize("seed", range(3))
def test_sum_product_is_exact_on_a_tree(scale, seed):
    # One hidden unit: the graph is a star. Biases batched over 4 models.
    W, _, _ = random_rbm(seed, 1, 8, scale=scale)
    rng = np.random.default_rng(100 + seed)
    B1, B2 = 2.0 * rng.standard_normal((4, 8)), 2.0 * rng.standard_normal((4, 1))
    result = belief_propagation(W, B1, B2, tol=1e-12, pairwise=True)
    assert np.all(result.converged) and np.all(result.n_iter <= 4)
    for s in range(4):
        truth = BruteForce(W, B1[s], B2[s])
        np.testing.assert_allclose(result.visible[s], truth.visible, atol=1e-10)
        np.testing.assert_allclose(result.hidden[s], truth.hidden, atol=1e-10)
        np.testing.assert_allclose(result.pairwise[s], truth.pairwise, atol=1e-10)


def test_sum_product_is_exact_on_a_star_of_hidden_units():
    # One visible unit and seven hidden units, weights +-5: also a tree.
    W, b, c = random_rbm(7, 7, 1, scale=5.0)
    result = belief_propagation(W, b, c, tol=1e-12, pairwise=True)
    truth = BruteForce(W, b, c)
    assert result.converged
    np.testing.assert_allclose(result.visible, truth.visible, atol=1e-10)
    np.testing.assert_allclose(result.hidden, truth.hidden, atol=1e-10)
    np.testing.assert_allclose(result.pairwise, truth.pairwise, atol=1e-10)


def test_damping_keeps_the_fixed_point():
    W, b, c = random_rbm(3, 1, 8, scale=3.0)
    result = belief_propagation(W, b, c, damping=0.5, tol=1e-13, max_iter=500)
    truth = BruteForce(W, b, c)
    assert result.converged and result.n_iter > 10  # damping slows it down
    np.testing.assert_allclose(result.visible, truth.visible, atol=1e-10)


@pytest.mark.parametrize("seed", range(3))
def test_bethe_log_partition_is_exact_on_a_tree(seed):
    W, b, c = random_rbm(seed, 1, 9, scale=3.0)
    B1 = b + np.random.default_rng(seed).standard_normal((2, 9))
    bethe = bethe_log_partition(W, B1, c, tol=1e-13)
    for s in range(2):
        assert bethe[s] == pytest.approx(BruteForce(W, B1[s], c).log_z, abs=1e-9)


def test_bethe_log_partition_is_close_on_a_weakly_coupled_loopy_model():
    W, b, c = random_rbm(0, 6, 10, scale=0.3, bias_scale=0.5)
    error = abs(bethe_log_partition(W, b, c, tol=1e-12) - BruteForce(W, b, c).log_z)
    assert error < 1e-3  # measured 2.9e-4


# --- loopy models --------------------------------------------------------------


def test_sum_product_beats_mean_field_on_weakly_coupled_loopy_models():
    # 10 visible x 6 hidden, W ~ N(0, 0.5^2), 10 models. Measured: BP singleton
    # errors at most 2.0e-3 (mean 9e-4), mean-field errors at least 2.8e-2
    # (mean 4e-2); BP's error is at most 0.04 times mean field's. Pairwise
    # beliefs: BP errors at most 7.1e-3, mean field's at least 4.6e-2.
    for seed in range(10):
        W, b, c = random_rbm(seed, 6, 10, scale=0.5, bias_scale=0.5)
        truth = BruteForce(W, b, c)
        bp = belief_propagation(W, b, c, tol=1e-10, max_iter=500, pairwise=True)
        mf = mean_field(W, b, c, tol=1e-10, max_iter=500, pairwise=True)
        assert bp.converged and mf.converged
        assert singleton_error(bp, truth) < 5e-3
        assert singleton_error(bp, truth) < 0.1 * singleton_error(mf, truth)
        bp_pairwise = np.abs(bp.pairwise - truth.pairwise).max()
        assert bp_pairwise < 1e-2
        assert bp_pairwise < 0.2 * np.abs(mf.pairwise - truth.pairwise).max()


def test_mean_field_reaches_its_fixed_point():
    W, b, c = random_rbm(4, 5, 7, scale=0.5)
    mf = mean_field(W, b, c, tol=1e-12, max_iter=1000, pairwise=True)
    assert mf.converged
    sigmoid = lambda x: 1.0 / (1.0 + np.exp(-x))  # noqa: E731
    np.testing.assert_allclose(mf.visible, sigmoid(b + W.T @ mf.hidden), atol=1e-11)
    np.testing.assert_allclose(mf.hidden, sigmoid(c + W @ mf.visible), atol=1e-11)
    np.testing.assert_array_equal(mf.pairwise, np.outer(mf.hidden, mf.visible))


def test_damped_mean_field_keeps_the_fixed_point():
    W, b, c = random_rbm(4, 5, 7, scale=0.5)
    plain = mean_field(W, b, c, tol=1e-13, max_iter=1000)
    damped = mean_field(W, b, c, tol=1e-13, max_iter=1000, damping=0.7)
    assert plain.converged and damped.converged and damped.n_iter > plain.n_iter
    np.testing.assert_allclose(damped.visible, plain.visible, atol=1e-11)
    np.testing.assert_allclose(damped.hidden, plain.hidden, atol=1e-11)


def test_mean_field_is_exact_without_couplings():
    b, c = np.array([-1.0, 0.0, 3.0]), np.array([0.5, -2.0])
    mf = mean_field(np.zeros((2, 3)), b, c)
    truth = BruteForce(np.zeros((2, 3)), b, c)
    assert mf.converged and mf.n_iter == 1
    np.testing.assert_allclose(mf.visible, truth.visible, atol=1e-15)
    np.testing.assert_allclose(mf.hidden, truth.hidden, atol=1e-15)


# --- MAP inference -------------------------------------------------------------


@pytest.mark.parametrize("scale", [1.0, 5.0])
def test_max_product_finds_the_joint_map_on_trees(scale):
    for seed in range(10):
        W, b, c = random_rbm(seed, 1, 9, scale=scale)
        result = belief_propagation(W, b, c, product="max", tol=0.0, max_iter=20)
        v_map, h_map = BruteForce(W, b, c).joint_map()
        np.testing.assert_array_equal(result.visible > 0.5, v_map == 1)
        np.testing.assert_array_equal(result.hidden > 0.5, h_map == 1)


def test_max_product_finds_the_joint_map_on_weakly_coupled_loopy_models():
    # 10 x 6, W ~ N(0, 0.5^2): measured 20 of 20 converged, all to the MAP.
    n_converged = 0
    for seed in range(20):
        W, b, c = random_rbm(seed, 6, 10, scale=0.5, bias_scale=0.5)
        result = belief_propagation(W, b, c, product="max", tol=1e-10, max_iter=500)
        if not result.converged:
            continue
        n_converged += 1
        v_map, h_map = BruteForce(W, b, c).joint_map()
        np.testing.assert_array_equal(result.visible > 0.5, v_map == 1)
        np.testing.assert_array_equal(result.hidden > 0.5, h_map == 1)
    assert n_converged >= 18


def test_mixed_product_finds_the_marginal_map_on_trees():
    # Mixed product's fixed points are local optima of sum_h p(v, h) against
    # flipping one v_i (Eq. 15 clamps v at its decoding), so it can miss the
    # global marginal MAP; undamped, the hard decoding can also oscillate (1
    # of these 40 stars). Measured with damping 0.5: all 40 converged, all
    # 1-flip optimal, 39 global.
    n_global = 0
    for seed in range(40):
        W, b, c = random_rbm(seed, 1, 8, scale=3.0)
        result = belief_propagation(
            W, b, c, product="mixed", tol=1e-10, damping=0.5, max_iter=500
        )
        truth = BruteForce(W, b, c)
        scores = truth.marginal_map_scores()
        decoded = (result.visible > 0.5).astype(np.float64)
        index = int(decoded @ (2.0 ** np.arange(8)[::-1]))  # itertools order
        flips = index ^ (1 << np.arange(8))
        assert result.converged
        assert np.all(scores[flips] <= scores[index])
        n_global += scores[index] == scores.max()
    assert n_global >= 39


def test_mixed_product_finds_the_marginal_map_on_small_loopy_models():
    # 10 x 6, W ~ N(0, 0.5^2): measured 20 of 20.
    n_found = 0
    for seed in range(20):
        W, b, c = random_rbm(seed, 6, 10, scale=0.5, bias_scale=0.5)
        result = belief_propagation(W, b, c, product="mixed", tol=1e-10)
        truth = BruteForce(W, b, c)
        v_mmap = truth.V[truth.marginal_map_scores().argmax()]
        n_found += np.array_equal(result.visible > 0.5, v_mmap == 1)
    assert n_found >= 19


# --- batches, robustness -------------------------------------------------------


@pytest.mark.parametrize("product", ["sum", "mixed", "max", "mean-field"])
def test_batched_call_equals_per_row_calls_bit_for_bit(product):
    W, _, _ = random_rbm(0, 5, 9, scale=1.5)
    rng = np.random.default_rng(1)
    B1, B2 = rng.standard_normal((6, 9)), rng.standard_normal((6, 5))
    if product == "mean-field":
        run = lambda b, c: mean_field(W, b, c, pairwise=True, tol=1e-6)  # noqa: E731
    else:
        run = lambda b, c: belief_propagation(  # noqa: E731
            W, b, c, product=product, pairwise=True, tol=1e-6
        )
    batch = run(B1, B2)
    assert batch.visible.shape == (6, 9) and batch.pairwise.shape == (6, 5, 9)
    for s in range(6):
        row = run(B1[s], B2[s])
        np.testing.assert_array_equal(batch.visible[s], row.visible)
        np.testing.assert_array_equal(batch.hidden[s], row.hidden)
        np.testing.assert_array_equal(batch.pairwise[s], row.pairwise)
        assert batch.n_iter[s] == row.n_iter and batch.converged[s] == row.converged
    # A 1-D bias is shared by every row of the other.
    shared = run(B1, B2[0])
    np.testing.assert_array_equal(shared.visible[2], run(B1[2], B2[0]).visible)


def test_unconverged_bp_reports_it_and_stays_finite():
    # Strong frustrated couplings, no biases: sum-product oscillates (measured:
    # not converged after 300 iterations).
    W, b, c = random_rbm(2, 10, 12, scale=5.0, bias_scale=0.0)
    result = belief_propagation(W, b, c, max_iter=100, tol=1e-6, pairwise=True)
    assert result.converged is False and result.n_iter == 100
    for beliefs in (result.visible, result.hidden, result.pairwise):
        assert np.all(np.isfinite(beliefs))
    for product in ("sum", "mixed", "max"):
        result = belief_propagation(
            W, b, c, product=product, max_iter=3, tol=1e-12, pairwise=True
        )
        assert result.converged is False and result.n_iter == 3
        assert np.all(np.isfinite(result.visible)) and np.all(result.visible <= 1)
        assert np.all(np.isfinite(result.pairwise))
    result = mean_field(W, b, c, max_iter=2, tol=1e-12)
    assert result.converged is False and result.n_iter == 2


def test_each_model_of_a_batch_stops_on_its_own():
    # Same strong W; the second model's biases (+-30) freeze it, so it
    # converges while the first keeps oscillating.
    W, _, _ = random_rbm(2, 10, 12, scale=5.0)
    B1 = np.stack([np.zeros(12), 30.0 * np.sign(np.arange(12) % 2 - 0.5)])
    B2 = np.stack([np.zeros(10), np.full(10, -30.0)])
    result = belief_propagation(W, B1, B2, max_iter=50, tol=1e-6)
    np.testing.assert_array_equal(result.converged, [False, True])
    assert result.n_iter[0] == 50 and result.n_iter[1] < 5


def test_huge_weights_give_finite_beliefs():
    W = np.array([[1e3, -1e3, 800.0], [-900.0, 2e3, -1e3]])
    for product in ("sum", "mixed", "max"):
        result = belief_propagation(
            W, np.array([-800.0, 5.0, 900.0]), np.array([1e3, -1e3]),
            product=product, pairwise=True,
        )  # fmt: skip
        for beliefs in (result.visible, result.hidden, result.pairwise):
            assert np.all(np.isfinite(beliefs))
            assert np.all((beliefs >= 0) & (beliefs <= 1))


def test_inputs_are_not_modified_and_read_only_inputs_work():
    W, b, c = random_rbm(0, 3, 4)
    copies = [W.copy(), b.copy(), c.copy()]
    for array in (W, b, c):
        array.flags.writeable = False
    result = belief_propagation(W, b, c, pairwise=True)
    mean_field(W, b, c, pairwise=True)
    for array, copy in zip((W, b, c), copies, strict=True):
        np.testing.assert_array_equal(array, copy)
    assert result.visible.shape == (4,) and result.pairwise.shape == (3, 4)
    assert isinstance(result.n_iter, int) and isinstance(result.converged, bool)


def test_one_compiled_specialisation_whatever_the_input_types():
    from sklearn_rbm._conditional import bp_kernels as bp

    W, b, c = random_rbm(0, 3, 4)
    read_only = W.copy()
    read_only.flags.writeable = False
    for args in [
        (W.astype(np.float32), b.astype(np.float32), c),
        (read_only, b.tolist(), c.astype(int)),
        (np.asfortranarray(W), np.tile(b, (2, 1)), c),
        (W, b[None, :], c[None, :]),
    ]:
        belief_propagation(*args, pairwise=True)
        mean_field(*args)
    assert len(bp.belief_propagation.signatures) == 1
    assert len(bp.mean_field.signatures) == 1


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(product="sum-product"), r"product must be one of \['max', 'mixed'"),
        (dict(max_iter=0), "max_iter must be an integer >= 1"),
        (dict(max_iter=2.5), "max_iter must be an integer >= 1"),
        (dict(tol=-1e-3), "tol must be a real number >= 0"),
        (dict(damping=1.0), r"damping must be a real number in \[0, 1\)"),
        (dict(damping=-0.1), r"damping must be a real number in \[0, 1\)"),
    ],
)
def test_bad_options_are_rejected(kwargs, message):
    W, b, c = random_rbm(0, 2, 3)
    with pytest.raises(ValueError, match=message):
        belief_propagation(W, b, c, **kwargs)
    if "product" not in kwargs:
        with pytest.raises(ValueError, match=message):
            mean_field(W, b, c, **kwargs)


@pytest.mark.parametrize(
    "shapes, message",
    [
        (((2, 3), (4,), (2,)), r"visible_bias must have shape \(3,\) or"),
        (((2, 3), (3,), (3,)), r"hidden_bias must have shape \(2,\) or"),
        (((2, 3), (5, 3), (4, 2)), "same number of rows"),
        (((6,), (6,), (1,)), "components must be a non-empty 2-D array"),
        (((2, 3), (2, 2, 3), (2,)), "visible_bias must have shape"),
    ],
)
def test_inconsistent_shapes_are_rejected(shapes, message):
    W, b, c = (np.zeros(shape) for shape in shapes)
    for function in (belief_propagation, mean_field, exact_marginals):
        with pytest.raises(ValueError, match=message):
            function(W, b, c)


@pytest.mark.parametrize("name", ["components", "visible_bias", "hidden_bias"])
def test_non_finite_values_are_rejected(name):
    arrays = dict(components=np.zeros((2, 3)), visible_bias=np.zeros(3))
    arrays["hidden_bias"] = np.zeros(2)
    arrays[name].flat[0] = np.nan
    with pytest.raises(ValueError, match=f"{name} contains NaN or infinite"):
        belief_propagation(**arrays)
