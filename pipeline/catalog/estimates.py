"""The estimators of ``synth audit stats``: weighted proportions with Wilson intervals, and
agreement between annotators (Cohen's and Fleiss' kappa).

Pure arithmetic over plain values, no catalog: ``audit.py`` gathers the labelled rows and their
sampling weights, these functions turn them into figures, and the tests check them against
samples whose truth is known.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Sequence

from pipeline.core.strict_model import StrictModel

Z_95 = 1.959963984540054
"""The two-sided 95% point of the standard normal distribution."""


class Estimate(StrictModel):
    """A proportion estimated from a weighted sample, with its 95% Wilson interval."""

    value: float | None
    """The weighted share: sum of the weights of the hits over the sum of all weights; None when
    the domain holds no labelled row."""
    low: float | None
    """The lower end of the 95% Wilson interval, computed with ``n_effective`` as the sample size."""
    high: float | None
    """The upper end."""
    n: int
    """Labelled rows in the domain (unweighted)."""
    hits: int
    """Of those, how many are hits (unweighted)."""
    n_effective: float
    """Kish's effective sample size, (sum w)^2 / sum w^2: ``n`` when every weight is equal, fewer
    when the weights vary (a sample that stands for unequal shares of the population tells less)."""


def wilson(p: float, n: float, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval of a proportion ``p`` observed over ``n`` trials (``n`` may be an
    effective, fractional size): the interval of true proportions whose normal test at ``z`` does
    not reject ``p``. Unlike p ± z·se it stays inside [0, 1] and is not empty at p = 0 or 1."""
    if n <= 0:
        return 0.0, 1.0
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    low, high = max(0.0, centre - half), min(1.0, centre + half)
    return (0.0 if p <= 0 else low), (1.0 if p >= 1 else high)  # exact where rounding would miss the end


def weighted_share(hits: Sequence[bool], weights: Sequence[float], z: float = Z_95) -> Estimate:
    """The weighted share of ``hits`` (one per labelled row of the domain, each with its sampling
    weight: how many rows of the population it stands for) and its Wilson interval over Kish's
    effective sample size. A stratified sample weighted this way estimates the population's share
    without bias toward the strata sampled more densely."""
    if len(hits) != len(weights):
        raise ValueError("hits and weights differ in length")
    total = sum(weights)
    if not hits or total <= 0:
        return Estimate(value=None, low=None, high=None, n=len(hits), hits=sum(hits), n_effective=0.0)
    p = sum(w for h, w in zip(hits, weights, strict=True) if h) / total
    n_eff = total * total / sum(w * w for w in weights)
    low, high = wilson(p, n_eff, z)
    return Estimate(value=p, low=low, high=high, n=len(hits), hits=sum(hits), n_effective=n_eff)


def cohen_kappa(pairs: Sequence[tuple[Hashable, Hashable]]) -> float | None:
    """Cohen's kappa of two annotators over the items both labelled (``pairs``: their two labels
    of one item): (observed agreement - chance agreement) / (1 - chance agreement), chance from
    each annotator's own label shares. None with no pair, or when chance agreement is 1 (both gave
    one and the same label throughout: agreement is then no evidence of anything)."""
    if not pairs:
        return None
    n = len(pairs)
    observed = sum(a == b for a, b in pairs) / n
    first, second = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    chance = sum(first[k] * second[k] for k in first) / (n * n)
    return None if chance >= 1 else (observed - chance) / (1 - chance)


def fleiss_kappa(items: Sequence[Sequence[Hashable]]) -> float | None:
    """Fleiss' kappa over ``items``, each the labels its annotators gave (items with fewer than two
    labels are left out; the number of annotators may differ between items, each item's agreement
    then being the share of its agreeing pairs). With the same number throughout it is Fleiss'
    (1971) statistic. None with no item of two labels, or when chance agreement is 1."""
    rated = [Counter(labels) for labels in items if len(labels) >= 2]
    if not rated:
        return None
    agreement = [sum(c * (c - 1) for c in counts.values()) / (m * (m - 1))
                 for counts in rated for m in [sum(counts.values())]]
    observed = sum(agreement) / len(agreement)
    totals: Counter[Hashable] = Counter()
    for counts in rated:
        totals.update(counts)
    all_labels = sum(totals.values())
    chance = sum((c / all_labels) ** 2 for c in totals.values())
    return None if chance >= 1 else (observed - chance) / (1 - chance)
