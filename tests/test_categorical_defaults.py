"""CategoricalRBM's ``'auto'`` size and epochs (issue 36): the rule, and a
fit with ``'auto'`` being the fit with the numbers the rule gives.

The measurements behind the rule (PF00014, PF13354) are in the User Guide,
*Wider families*; ``benchmarks/bench_defaults.py --only categorical`` prints
them.
"""

import numpy as np
import pytest

from sklearn_rbm import CategoricalRBM
from sklearn_rbm._rbm.categorical import default_epochs, default_hidden_units


def test_pf00014_keeps_the_defaults_it_was_tuned_with():
    # 53 columns: PF00014's tuned 100 units and 20 epochs, and no fewer on
    # narrower data.
    assert (default_hidden_units(53), default_epochs(53)) == (100, 20)
    assert (default_hidden_units(4), default_epochs(4)) == (100, 20)


def test_wider_families_get_a_unit_per_column_and_an_epoch_per_three():
    # PF13354: 202 columns; the floors end at 100 and 60 columns.
    assert (default_hidden_units(202), default_epochs(202)) == (202, 68)
    assert (default_hidden_units(101), default_epochs(61)) == (101, 21)
    assert (default_hidden_units(100), default_epochs(60)) == (100, 20)


def test_auto_fit_is_the_fit_with_the_rule_numbers():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(40, 110)).astype(float)
    auto = CategoricalRBM(batch_size=20, random_state=0).fit(X)
    assert auto.components_.shape == (110, 220)
    assert auto.n_iter_ == 37
    explicit = CategoricalRBM(110, batch_size=20, n_iter=37, random_state=0)
    explicit.fit(X)
    assert np.array_equal(auto.components_, explicit.components_)
    assert np.array_equal(auto.intercept_hidden_, explicit.intercept_hidden_)
    # One-hot rows count their columns, not their indicators.
    one_hot = np.eye(2)[X.astype(int)].reshape(40, -1)
    auto_one_hot = CategoricalRBM(n_states=2, one_hot=True, batch_size=20,
                                  random_state=0).fit(one_hot)  # fmt: skip
    assert auto_one_hot.n_iter_ == 37
    assert np.array_equal(auto_one_hot.components_, auto.components_)


def test_auto_units_of_a_warm_start_are_its_own():
    rng = np.random.default_rng(2)
    X = rng.integers(0, 3, size=(60, 5)).astype(float)
    source = CategoricalRBM(7, n_iter=1, random_state=0).fit(X)
    warm = CategoricalRBM(init=source, n_iter=1, random_state=0).fit(X)
    assert warm.components_.shape == (7, 15)
    with pytest.raises(ValueError, match="n_components"):
        CategoricalRBM(n_components="many").fit(X)
    with pytest.raises(ValueError, match="n_iter"):
        CategoricalRBM(n_iter="long").fit(X)
