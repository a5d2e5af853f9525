"""``python -m sklearn_rbm``: a tour of the package on embedded data.

Each stop fits one estimator on data that ships with scikit-learn or is
generated and shows it where it helps, next to the plain baseline: RBM
features for a classifier with few labels, a Gaussian RBM above one
full-covariance Gaussian, a conditional RBM ahead of per-pixel logistic
regression. The whole tour takes about half a minute (23 s of CPU time on
one thread), its first run included: ``pip install`` compiled the kernels
it needs.
"""

import sys
import time
import warnings

import numpy as np


def _header(title):
    print(f"\n== {title} " + "=" * max(0, 70 - len(title)))


def tour_dcp_solvers():
    """Upadhya & Sastry (2017), Fig. 1: S-DCP escapes where CD and PCD stall;
    parallel tempering (Desjardins et al. 2010) at the same Gibbs cost."""
    from sklearn_rbm import DCPBernoulliRBM
    from sklearn_rbm.datasets import make_shifting_bar

    _header("DCPBernoulliRBM: solvers on the shifting-bar data (exact log-likelihood)")
    X = make_shifting_bar()
    print("9 patterns, 4 hidden units, full batch, 3,000 epochs, equal cost per update")
    print(f"best possible average log-likelihood: -ln 9 = {-np.log(9):.3f}")
    chains = dict(n_gibbs_steps=12)
    inner = dict(n_gibbs_steps=4, n_inner_steps=3)
    tempered = dict(n_gibbs_steps=3, n_temperatures=4)
    for solver, label, cost in (
        ("cd", "(K=12)", chains),
        ("pcd", "(K=12)", chains),
        ("cg", "(K=12)", chains),
        ("sdcp", "(d=3, K'=4)", inner),
        ("csdcp", "(d=3, K'=4)", inner),
        ("pt", "(T=4, K=3)", tempered),
    ):
        rbm = DCPBernoulliRBM(
            n_components=4,
            solver=solver,
            learning_rate=0.3,
            batch_size=9,
            n_iter=3000,
            random_state=0,
            **cost,
        ).fit(X)
        print(f"  {solver:6s} {label:12s} log-likelihood {rbm.score(X):7.3f}")


def tour_features():
    """Hidden units as features: an RBM fitted on images without their labels
    helps a classifier that sees few labelled ones."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split

    from sklearn_rbm import DCPBernoulliRBM
    from sklearn_rbm.datasets import load_binary_digits

    _header("DCPBernoulliRBM features for a classifier with few labels (digits)")
    X, y = load_binary_digits()
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.3, random_state=0, stratify=y
    )
    start = time.perf_counter()
    rbm = DCPBernoulliRBM(
        n_components=128, solver="csdcp", learning_rate=0.05, batch_size=10,
        n_iter=50, random_state=0,
    ).fit(X_train)  # fmt: skip
    print(
        f"  128 hidden units fitted on the {len(X_train)} training images, "
        f"without labels [{time.perf_counter() - start:.1f} s]; then"
    )
    print("  LogisticRegression() on the first n labelled images of each digit:")
    print("  labels per digit   raw pixels   RBM features   (test accuracy)")
    F_train, F_test = rbm.transform(X_train), rbm.transform(X_test)
    for per_digit in (5, 10, 50, None):
        if per_digit is None:
            rows = np.arange(len(y_train))
        else:
            rows = np.concatenate(
                [np.flatnonzero(y_train == digit)[:per_digit] for digit in range(10)]
            )
        raw = LogisticRegression(max_iter=2000).fit(X_train[rows], y_train[rows])
        ours = LogisticRegression(max_iter=2000).fit(F_train[rows], y_train[rows])
        label = "all" if per_digit is None else str(per_digit)
        print(
            f"  {label:>16s}   {raw.score(X_test, y_test):10.3f}   "
            f"{ours.score(F_test, y_test):12.3f}"
        )
    print("  (with every label, the 64 raw pixels are hard to beat;")
    print("  examples/plot_rbm_features.py compares on MNIST)")
    rbm.set_params(score_method="ais", ais_betas=2000)
    ais = rbm.log_partition_function()
    print(
        f"  log Z by AIS (100 chains, 2,000 temperatures): {ais.log_z:.2f} "
        f"[{ais.lower:.2f}, {ais.upper:.2f}]"
    )
    print(f"  held-out log-likelihood per image: {rbm.score(X_test):.2f} nats")


def tour_likelihood():
    """Exact enumeration against AIS on a model small enough to check."""
    from sklearn_rbm import DCPBernoulliRBM
    from sklearn_rbm.datasets import load_binary_digits
    from sklearn_rbm.likelihood import log_partition_ais, log_partition_exact

    _header("Likelihood: exact enumeration against AIS (digits, 16 hidden units)")
    X, _ = load_binary_digits()
    rbm = DCPBernoulliRBM(
        n_components=16, solver="csdcp", n_gibbs_steps=4, learning_rate=0.1,
        batch_size=20, n_iter=30, random_state=0,
    ).fit(X)  # fmt: skip
    params = (rbm.components_, rbm.intercept_visible_, rbm.intercept_hidden_)
    start = time.perf_counter()
    exact = log_partition_exact(*params)
    print(
        f"  exact log Z (2**16 hidden states, Gray code): {exact:.4f}  "
        f"[{time.perf_counter() - start:.2f} s]"
    )
    for n_betas in (100, 1000, 10_000):
        start = time.perf_counter()
        est = log_partition_ais(
            *params, base_rate=rbm.base_rate_bias_, betas=n_betas, random_state=0
        )
        print(
            f"  AIS, {n_betas:6d} temperatures: {est.log_z:.4f} "
            f"[{est.lower:.4f}, {est.upper:.4f}]  [{time.perf_counter() - start:.2f} s]"
        )


def tour_gaussian():
    """Real-valued data: the log-density of grey-level digits, by AIS, above
    that of one full-covariance Gaussian."""
    from sklearn.datasets import load_digits
    from sklearn.mixture import GaussianMixture
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    from sklearn_rbm import GaussianBernoulliRBM

    _header("GaussianBernoulliRBM: density of grey-level digits (nats per image)")
    X = load_digits().data
    X = X + np.random.default_rng(0).random(X.shape)  # dequantise the 17 levels
    X_train, X_test = train_test_split(X, test_size=0.3, random_state=0)
    scaler = StandardScaler().fit(X_train)
    X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)
    print("8x8 digits plus uniform noise, standardised; held-out log-density:")
    for k in (1, 4):
        gmm = GaussianMixture(k, random_state=0).fit(X_train)
        print(f"  full-covariance Gaussian mixture, {k} component(s): "
              f"{gmm.score(X_test):7.2f}")  # fmt: skip
    # Explicit settings, measured on this split: 128 units trained by CD-10
    # for 100 epochs capture more than the pairwise correlations that one
    # full-covariance Gaussian holds (16 units, CD-10, 100 epochs: -77.3).
    start = time.perf_counter()
    rbm = GaussianBernoulliRBM(
        n_components=128, solver="cd", n_gibbs_steps=10, learning_rate=0.02,
        batch_size=20, n_iter=100, score_method="ais", ais_betas=2000,
        random_state=0,
    ).fit(X_train)  # fmt: skip
    seconds = time.perf_counter() - start
    ais = rbm.log_partition_function()
    print(
        f"  RBM, 128 hidden units, CD-10, 100 epochs:            "
        f"{rbm.score(X_test):7.2f}  [{seconds:.1f} s]"
    )
    print(
        f"  log Z by AIS (100 chains, 2,000 temperatures): {ais.log_z:.2f} "
        f"[{ais.lower:.2f}, {ais.upper:.2f}]"
    )
    print("  (128 units, CD-25, 600 epochs: -63.9, past every full-covariance")
    print("  mixture; see the user guide)")


def tour_frank_wolfe():
    """Ping, Liu & Ihler (2016): grow an RBM unit by unit, choose its size,
    fine-tune it by CD."""
    from sklearn_rbm import FrankWolfeRBM
    from sklearn_rbm.datasets import load_binary_digits

    _header("FrankWolfeRBM: growing an RBM on digits (Ping, Liu & Ihler 2016)")
    X, _ = load_binary_digits()
    X_train, X_test = X[:1400], X[1400:]
    start = time.perf_counter()
    fw = FrankWolfeRBM(
        max_components=40, n_samples_per_step=300, validation_fraction=0.2,
        early_stopping=False, score_every=10, score_method="ais", ais_betas=500,
        random_state=0,
    ).fit(X_train)  # fmt: skip
    print(f"  grew {fw.n_iter_} units in {time.perf_counter() - start:.1f} s")
    h = fw.history_
    for k in np.flatnonzero(~np.isnan(h["validation_log_likelihood"])):
        print(
            f"  {h['n_components'][k]:3d} units: sub-problem objective "
            f"{h['objective'][k]:7.3f}, free-energy gap {h['free_energy_gap'][k]:.3f}, "
            f"held-out log-likelihood {h['validation_log_likelihood'][k]:.2f}"
        )
    print(f"  chosen on held-out data: {fw.n_components_} units, "
          f"test log-likelihood {fw.score(X_test):.2f}")  # fmt: skip
    tuned = fw.fine_tune(
        X_train, n_gibbs_steps=10, learning_rate=0.01, batch_size=20, n_iter=5,
        score_method="ais", ais_betas=500, random_state=0,
    )  # fmt: skip
    print(f"  CD-10 initialised by Frank-Wolfe, 5 epochs: {tuned.score(X_test):.2f}")


def tour_conditional():
    """Ping & Ihler (2017), Table 2: a conditional RBM completes occluded
    digits better than logistic regression per pixel."""
    from sklearn.linear_model import LogisticRegression

    from sklearn_rbm import ConditionalRBMRegressor
    from sklearn_rbm.datasets import load_binary_digits, occlude_patches

    _header("ConditionalRBMRegressor: completing digits under a 4x4 patch")
    Y, _ = load_binary_digits()
    Y = Y[np.random.RandomState(0).permutation(len(Y))]
    X = occlude_patches(Y, 4, random_state=1)
    X_train, Y_train, X_test, Y_test = X[:1300], Y[:1300], X[1300:], Y[1300:]
    changed = X_test != Y_test

    def report(name, predicted, seconds):
        wrong = predicted != Y_test
        print(
            f"  {name:24s} per-pixel error {100 * wrong.mean():.2f}% "
            f"({100 * wrong[changed].mean():.1f}% of the occluded strokes)  "
            f"[{seconds:.1f} s]"
        )

    print(f"  occluded input           per-pixel error {100 * changed.mean():.2f}%")
    start = time.perf_counter()
    columns = []
    for y in Y_train.T:  # pixels that are always 0 in training stay 0
        if np.all(y == y[0]):
            columns.append(np.full(len(X_test), y[0]))
        else:
            columns.append(LogisticRegression().fit(X_train, y).predict(X_test))
    report(
        "LogisticRegression()", np.column_stack(columns), time.perf_counter() - start
    )
    # From a random start, as in Ping & Ihler's experiments, a few epochs at a
    # large rate: the defaults (early stopping on held-out rows, up to 20
    # epochs) take longer than a tour stop.
    for name, solver, batch_size, n_iter in (
        ("CD-10, 32 hidden units", "cd", 20, 20),
        ("MLE-BP, 32 hidden units", "bp", 10, 10),
    ):
        start = time.perf_counter()
        crbm = ConditionalRBMRegressor(
            n_components=32, solver=solver, learning_rate=0.2,
            batch_size=batch_size, n_iter=n_iter, early_stopping=False,
            random_state=0,
        ).fit(X_train, Y_train)  # fmt: skip
        report(name, crbm.predict(X_test), time.perf_counter() - start)
    print(
        "  MLE-BP held-out log p(y | x), Bethe approximation: "
        f"{crbm.score(X_test, Y_test):.2f} nats per image"
    )


def tour_fvbm():
    """Nguyen & Wood (2016): a fully visible Boltzmann machine by maximum
    pseudo-likelihood."""
    from sklearn_rbm import FVBMPseudoLikelihood
    from sklearn_rbm.datasets import make_fvbm

    _header("FVBMPseudoLikelihood: Nguyen & Wood's simulation at d=10, n=16,000")
    d = 10
    X, coupling, _ = make_fvbm(16000, d, coupling_variance=0.5 / d, random_state=0)
    upper = np.triu_indices(d, 1)
    solvers = ("newton", "bslm", "mm", "lbfgs")
    with warnings.catch_warnings():  # load (or compile) the kernels first, so
        warnings.simplefilter("ignore")  # that the times below are the fits'
        for solver in solvers:
            FVBMPseudoLikelihood(solver=solver, max_iter=1).fit(X)
    for solver in solvers:
        start = time.perf_counter()
        fvbm = FVBMPseudoLikelihood(solver=solver).fit(X)
        mse = np.mean((fvbm.coupling_ - coupling)[upper] ** 2)
        print(
            f"  {solver:6s} {fvbm.n_iter_:4d} iterations "
            f"{time.perf_counter() - start:5.2f} s  "
            f"mean log-PL {fvbm.pseudo_likelihood_curve_[-1]:.5f}  "
            f"coupling MSE {mse:.1e}"
        )
    low, high = np.moveaxis(fvbm.confidence_intervals(0.05)[0], -1, 0)
    covered = np.mean(((low <= coupling) & (coupling <= high))[upper])
    print(
        f"  exact log-likelihood per sample {fvbm.score(X):.4f} (the log-PL is not "
        f"a likelihood); 95% intervals cover {covered:.0%} of the true couplings"
    )


def tour_potts():
    """Direct coupling analysis: which sites of a sequence family touch."""
    from sklearn_rbm import PottsPseudoLikelihood
    from sklearn_rbm.datasets import make_potts
    from sklearn_rbm.sequences import contact_precision, sequence_weights

    _header("PottsPseudoLikelihood: contacts of a generated sequence family")
    X, contacts, _, _ = make_potts(3000, 30, 4, random_state=0)
    print(
        f"  {X.shape[0]} sequences of {X.shape[1]} sites, 4 states, "
        f"{contacts.sum() // 2} coupled pairs hidden among {30 * 29 // 2}"
    )
    start = time.perf_counter()
    weights = sequence_weights(X)
    potts = PottsPseudoLikelihood(n_states=4).fit(X, sample_weight=weights)
    precision = contact_precision(
        potts.contact_scores(), contacts, contacts.sum() // 2, min_separation=1
    )
    print(
        f"  weights (effective sequences {weights.sum():.0f}) and fit "
        f"{time.perf_counter() - start:.1f} s: the {contacts.sum() // 2} top "
        f"APC-corrected coupling norms are true pairs at a rate of {precision:.2f}"
    )


def tour_categorical():
    """Tubiana, Cocco & Monasson (2019): an RBM of categorical sequences."""
    from sklearn_rbm import CategoricalRBM
    from sklearn_rbm.datasets import make_potts
    from sklearn_rbm.sequences import sequence_weights

    _header("CategoricalRBM: the same kind of family, learned by hidden units")
    X, _, _, _ = make_potts(3000, 30, 4, random_state=0)
    X_train, X_test = X[:2400], X[2400:]
    start = time.perf_counter()
    rbm = CategoricalRBM(
        n_components=50, n_states=4, solver="csdcp", learning_rate=0.05,
        n_iter=50, random_state=0,
    ).fit(X_train, sample_weight=sequence_weights(X_train))  # fmt: skip
    seconds = time.perf_counter() - start
    independent = rbm.site_fields_[np.arange(30), X_test].sum(axis=1).mean()
    print(
        f"  50 hidden units, centred S-DCP, 50 epochs [{seconds:.1f} s]; held-out "
        f"log-likelihood per sequence (AIS) {rbm.score(X_test):.2f} against "
        f"{independent:.2f} for independent sites"
    )


TOUR = [
    tour_dcp_solvers,
    tour_features,
    tour_likelihood,
    tour_gaussian,
    tour_frank_wolfe,
    tour_conditional,
    tour_fvbm,
    tour_potts,
    tour_categorical,
]


def main():
    """Run every stop of the tour and report the time it took."""
    start = time.perf_counter()
    print("sklearn_rbm demo tour (nine stops, about half a minute)")
    for stop in TOUR:
        stop()
    print(f"\nTour finished in {time.perf_counter() - start:.0f} s.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
