"""CategoricalRBM on a protein family: held-out likelihood and PCD epoch time.

Reads an aligned FASTA file (gzip or plain; letters ``-ACDEFGHIKLMNPQRSTVWY``,
anything else read as a gap), splits the sequences 80/20 at random, weights
the training sequences by the usual reweighting (each sequence counts ``1 /``
the number of training sequences within 20% Hamming distance of it), and
prints, from one run:

* the held-out log-likelihood per sequence of the independent-site model and
  of a ``CategoricalRBM`` trained by PCD (AIS from the independent-site
  model, with its band), unweighted mean over the held-out sequences;
* the time of one PCD-1 epoch and its floor: the five matrix products a
  PCD-1 mini-batch needs (``S W^T`` for the data and for the chains, ``H W``
  for the chains' visible draw, the two outer products ``H^T S``), timed
  alone on the same shapes for every mini-batch of the epoch, in the same run.

* AIS against the exact ``log Z`` (2^12 hidden states enumerated) of an RBM
  with 12 hidden units trained on the same data;
* with ``--contacts PATH`` (a file of rows ``i j <unused> distance`` over
  the alignment's columns, 1-based, as ``PF00014_struct.dat``): the
  precision of the RBM's top ``L`` and ``2 L`` contact scores
  (``contact_scores(apc=True)``) among pairs with ``|i - j| >= 5``, a
  contact being a distance below 8 Å;
* with ``--pgm PATH`` (the ``source`` folder of a jertubiana/PGM checkout,
  run as it is, never copied here): PGM's RBM with the same visible units,
  number of Bernoulli hidden units, epochs, batch size, split and weights
  (PGM's own optimiser and learning rate), its time for one more epoch and
  its held-out log-likelihood by its own AIS.

Run: ``python benchmarks/bench_categorical_rbm.py PATH/PF00014_mgap6.fasta.gz``
(``--hidden``, ``--epochs``, ``--learning-rate``, ``--l1b``, ``--hidden-unit``;
``--time-only`` skips training and scoring). Set ``OPENBLAS_NUM_THREADS`` /
``NUMBA_NUM_THREADS`` to fix the threads.
"""

import argparse
import time

import numpy as np

from sklearn_rbm import CategoricalRBM
from sklearn_rbm._rbm.layers.categorical import independent_site_fields
from sklearn_rbm.sequences import contact_precision, read_alignment, sequence_weights

ALPHABET = "-ACDEFGHIKLMNPQRSTVWY"


def contact_map(path, length, cutoff=8.0):
    """Pairs closer than ``cutoff`` Angstrom in the distance file at ``path``
    (i, j, -, distance; 1-based sites)."""
    table = np.loadtxt(path)
    contact = np.zeros((length, length), dtype=bool)
    i, j = table[:, 0].astype(int) - 1, table[:, 1].astype(int) - 1
    contact[i, j] = contact[j, i] = table[:, 3] < cutoff
    return contact


def run_pgm(source, train, test, weights, hidden, epochs, batch_size):
    """jertubiana/PGM's RBM on the same data: held-out log-likelihood per
    sequence (its AIS), seconds of its fit and of one more epoch."""
    import sys

    sys.path.insert(0, source)
    import rbm as pgm_rbm  # noqa: PLC0415 (the user's checkout, at run time)

    model = pgm_rbm.RBM(visible="Potts", hidden="Bernoulli", n_v=train.shape[1],
                        n_h=hidden, n_cv=len(ALPHABET), random_state=0)  # fmt: skip
    train16, test16 = train.astype(np.int16), test.astype(np.int16)
    start = time.perf_counter()
    model.fit(train16, weights=weights.astype(np.float32), batch_size=batch_size,
              n_iter=epochs, verbose=0)  # fmt: skip
    fit_seconds = time.perf_counter() - start
    start = time.perf_counter()
    model.fit(train16, weights=weights.astype(np.float32), batch_size=batch_size,
              n_iter=1, verbose=0)  # fmt: skip
    epoch_seconds = time.perf_counter() - start
    model.AIS(n_betas=10000, verbose=0)
    return float(model.likelihood(test16).mean()), fit_seconds, epoch_seconds


def floor_seconds(X, rbm, repeat=3):
    """The five matrix products of a PCD-1 epoch, alone, best of ``repeat``."""
    W = rbm.components_
    n_hidden, n_cols = W.shape
    B = rbm.batch_size
    rng = np.random.default_rng(0)
    S = np.zeros((B, n_cols), W.dtype)
    S[np.arange(B)[:, None], rng.integers(0, n_cols, (B, X.shape[1]))] = 1.0
    H = rng.random((B, n_hidden)).astype(W.dtype)
    out = np.empty_like(W)
    n_batches = -(-X.shape[0] // B)
    best = np.inf
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(n_batches):
            np.dot(S, W.T)  # data hidden input
            np.dot(H, W)  # chains' visible input
            np.dot(S, W.T)  # chains' hidden input
            np.dot(H.T, S, out=out)  # data outer product
            np.dot(H.T, S, out=out)  # chains' outer product
        best = min(best, time.perf_counter() - start)
    return best


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("path")
    parser.add_argument("--hidden", type=int, default=100)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=100)
    parser.add_argument("--learning-rate", type=float, default=0.05)
    parser.add_argument("--l1b", type=float, default=0.0)
    parser.add_argument("--ais-betas", type=int, default=10000)
    parser.add_argument("--hidden-unit", default="bernoulli")
    parser.add_argument("--contacts", default=None)
    parser.add_argument("--pgm", default=None)
    parser.add_argument("--time-only", action="store_true")
    args = parser.parse_args(argv)

    codes = read_alignment(args.path)[0].astype(np.float64)
    n, length = codes.shape
    rng = np.random.default_rng(0)
    order = rng.permutation(n)
    n_train = int(0.8 * n)
    train, test = codes[order[:n_train]], codes[order[n_train:]]
    start = time.perf_counter()
    weights = sequence_weights(train.astype(np.uint8))
    print(f"{n} sequences x {length} sites, q = {len(ALPHABET)}; train {n_train}, "
          f"test {n - n_train}; effective training sequences {weights.sum():.0f} "
          f"(weights in {time.perf_counter() - start:.1f} s)")  # fmt: skip

    # One PCD epoch against its floor, same run.
    timing = CategoricalRBM(
        n_components=args.hidden, n_states=len(ALPHABET), solver="pcd",
        batch_size=args.batch_size, n_iter=1, learning_rate=args.learning_rate,
        random_state=0,
    )  # fmt: skip
    timing.fit(train[:200], sample_weight=weights[:200])  # compile
    epochs = []
    for _ in range(3):
        timing.partial_fit(train, sample_weight=weights)
        epochs.append(timing.history_["seconds"][-1])
    epoch = min(epochs)
    floor = floor_seconds(train, timing)
    print(f"PCD-1 epoch ({args.hidden} hidden, batch {args.batch_size}): "
          f"{epoch:.3f} s; floor (5 matrix products) {floor:.3f} s; "
          f"ratio {epoch / floor:.2f}")  # fmt: skip
    if args.time_only:
        return

    fields = independent_site_fields(train, len(ALPHABET), weights)
    test_codes = test.astype(np.int64)
    independent = fields[np.arange(length), test_codes].sum(axis=1).mean()

    rbm = CategoricalRBM(
        n_components=args.hidden, n_states=len(ALPHABET), solver="pcd",
        batch_size=args.batch_size, n_iter=args.epochs,
        learning_rate=args.learning_rate, l1b=args.l1b,
        hidden_unit=args.hidden_unit, score_method="ais",
        ais_betas=args.ais_betas, random_state=0,
    )  # fmt: skip
    start = time.perf_counter()
    rbm.fit(train, sample_weight=weights)
    fit_seconds = time.perf_counter() - start
    start = time.perf_counter()
    held_out = rbm.score(test)
    band = rbm.log_partition_
    score_seconds = time.perf_counter() - start
    # The band of log Z is the band of the log-likelihood, reversed.
    low, high = held_out + band.log_z - band.upper, held_out + band.log_z - band.lower
    print(
        f"held-out log-likelihood per sequence: independent-site {independent:.2f}; "
        f"CategoricalRBM {held_out:.2f} (AIS band {low:.2f} to {high:.2f}, "
        f"{args.ais_betas} temperatures, {rbm.ais_n_chains} chains); "
        f"fit {fit_seconds:.1f} s ({args.epochs} epochs), AIS {score_seconds:.1f} s"
    )
    small = CategoricalRBM(
        n_components=12, n_states=len(ALPHABET), batch_size=args.batch_size,
        n_iter=args.epochs, learning_rate=args.learning_rate, score_method="exact",
        ais_betas=args.ais_betas, random_state=0,
    ).fit(train, sample_weight=weights)  # fmt: skip
    exact = small.log_partition_function()
    small.set_params(score_method="ais")
    ais = small.log_partition_function()
    inside = ais.lower <= exact.log_z <= ais.upper
    print(f"12 hidden units: exact log Z {exact.log_z:.3f}; AIS {ais.log_z:.3f} "
          f"(band {ais.lower:.3f} to {ais.upper:.3f}): exact "
          f"{'inside' if inside else 'OUTSIDE'} the band")  # fmt: skip
    if args.contacts:
        scores, truth = rbm.contact_scores(apc=True), contact_map(args.contacts, length)
        at_l, at_2l = (
            contact_precision(scores, truth, k, min_separation=5)
            for k in (length, 2 * length)
        )
        print(f"contacts (|i - j| >= 5, < 8 A): PPV@L {at_l:.2f}, PPV@2L {at_2l:.2f}")
    if args.pgm:
        held, fit_seconds, pgm_epoch = run_pgm(
            args.pgm, train.astype(np.int64), test_codes, weights, args.hidden,
            args.epochs, args.batch_size,
        )  # fmt: skip
        print(
            f"jertubiana/PGM RBM (same split, weights, {args.hidden} Bernoulli "
            f"hidden units, {args.epochs} epochs, its ADAM defaults): held-out "
            f"{held:.2f}; fit {fit_seconds:.1f} s; one more epoch {pgm_epoch:.2f} s; "
            f"our PCD epoch / PGM's: {epoch / pgm_epoch:.2f}"
        )


if __name__ == "__main__":
    main()
