"""Gray-code walks: consecutive codes differ in one bit, the lowest set bit
of the counter, so an enumeration over ``2 ** k`` binary states updates its
running sums by one unit per state instead of recomputing them (the exact
``log Z`` of RBMs and fully visible Boltzmann machines)."""

from .jit import jit


@jit
def gray_code(i):
    """The ``i``-th Gray code: bit ``j`` is unit ``j``'s state."""
    return i ^ (i >> 1)


@jit
def lowest_set_bit(i):
    """The bit that flips between Gray codes ``i - 1`` and ``i`` (``i > 0``)."""
    bit = 0
    while (i & 1) == 0:
        i >>= 1
        bit += 1
    return bit
