"""Scored answers of persons who read the test in different languages -> differential item
functioning (DIF) per item: the Mantel-Haenszel common odds ratio across total-score strata, the
ETS delta scale with its A/B/C categories, and the standardised p-difference. Whether a
translated item behaves like its original, checked by the data.

Formulas (docs/stats.md cites them): for each stratum k of the total score, A_k, B_k the
reference group's right and wrong answers, C_k, D_k the focal group's, N_k their sum.

- alpha_MH = sum(A_k D_k / N_k) / sum(B_k C_k / N_k)            (Mantel & Haenszel 1959)
- MH D-DIF = -2.35 ln alpha_MH                                   (Holland & Thayer 1988)
- var(ln alpha_MH) by Robins, Breslow & Greenland (1986); SE(D-DIF) = 2.35 sqrt(var)
- MH chi-square = (|sum A_k - sum E(A_k)| - 0.5)^2 / sum var(A_k), with E(A_k) = n_Rk m_1k / N_k
  and var(A_k) = n_Rk n_Fk m_1k m_0k / (N_k^2 (N_k - 1)), one degree of freedom
- ETS categories (Zwick 2012): A when |D-DIF| < 1 or the MH chi-square is not significant at
  0.05; C when |D-DIF| >= 1.5 and |D-DIF| is significantly above 1 (one-sided at 0.05:
  (|D-DIF| - 1) / SE > 1.645); B otherwise
- STD P-DIF = sum n_Fk (p_Fk - p_Rk) / sum n_Fk                  (Dorans & Kulick 1986)

A stratum where one group is absent carries no information and is left out. Negative D-DIF and
STD P-DIF: the item is harder for the focal group than for reference persons of the same total.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

#: One-sided 5% point of the standard normal (the C category's test that |D-DIF| > 1).
Z_ONE_SIDED = 1.6448536269514722
#: The MH chi-square's level of significance (the A category).
ALPHA_LEVEL = 0.05
#: Language names for messages.
LANGUAGE_NAMES = {"id": "Indonesian", "en": "English", "ms": "Malay", "jv": "Javanese",
                  "su": "Sundanese", "ar": "Arabic", "zh": "Chinese", "ja": "Japanese",
                  "nl": "Dutch", "fr": "French", "de": "German", "es": "Spanish"}


@dataclass(frozen=True, slots=True)
class Dif:
    """One item's DIF between a reference and a focal language."""

    item: str
    reference: str
    focal: str
    n_reference: int
    n_focal: int
    #: the Mantel-Haenszel common odds ratio (None when it is not defined)
    alpha_mh: float | None
    #: MH D-DIF = -2.35 ln alpha_MH (ETS delta scale)
    delta: float | None
    se: float | None
    chi2: float | None
    p_value: float | None
    #: ETS category: A (negligible), B (moderate), C (large); "" when not defined
    category: str
    #: the standardised p-difference (focal minus reference, weighted by the focal group)
    std_p_dif: float | None


def language_name(code: str) -> str:
    return LANGUAGE_NAMES.get(code, code)


def stratified(right: Sequence[bool], focal: Sequence[bool], strata: Sequence[float]
               ) -> list[tuple[int, int, int, int]]:
    """(A, B, C, D) per stratum (by stratum value), strata with both groups only."""
    cells: dict[float, list[int]] = {}
    for r, f, s in zip(right, focal, strata, strict=True):
        c = cells.setdefault(s, [0, 0, 0, 0])
        c[(2 if f else 0) + (0 if r else 1)] += 1
    return [(a, b, c, d) for _, (a, b, c, d) in sorted(cells.items())
            if a + b > 0 and c + d > 0]


def mantel_haenszel(tables: Sequence[tuple[int, int, int, int]]
                    ) -> tuple[float | None, float | None, float | None, float | None]:
    """(alpha_MH, var(ln alpha_MH) by Robins-Breslow-Greenland, MH chi-square with continuity
    correction, its p-value) of 2x2 tables (A, B, C, D); None where not defined."""
    r_sum = math.fsum(a * d / (a + b + c + d) for a, b, c, d in tables)
    s_sum = math.fsum(b * c / (a + b + c + d) for a, b, c, d in tables)
    alpha = var = None
    if r_sum > 0 and s_sum > 0:
        alpha = r_sum / s_sum
        pr, ps_qr, qs = [], [], []
        for a, b, c, d in tables:
            n = a + b + c + d
            p, q, r, s = (a + d) / n, (b + c) / n, a * d / n, b * c / n
            pr.append(p * r)
            ps_qr.append(p * s + q * r)
            qs.append(q * s)
        var = (math.fsum(pr) / (2 * r_sum ** 2) + math.fsum(ps_qr) / (2 * r_sum * s_sum)
               + math.fsum(qs) / (2 * s_sum ** 2))
    observed, expected, variance = [], [], []
    for a, b, c, d in tables:
        n = a + b + c + d
        n_r, n_f, m1, m0 = a + b, c + d, a + c, b + d
        observed.append(a)
        expected.append(n_r * m1 / n)
        if n > 1:
            variance.append(n_r * n_f * m1 * m0 / (n * n * (n - 1)))
    v = math.fsum(variance)
    chi2 = p_value = None
    if v > 0:
        chi2 = max(abs(math.fsum(observed) - math.fsum(expected)) - 0.5, 0.0) ** 2 / v
        p_value = math.erfc(math.sqrt(chi2 / 2))
    return alpha, var, chi2, p_value


def ets_category(delta: float | None, se: float | None, p_value: float | None) -> str:
    """A, B or C by the ETS rules (see the module's docstring); "" when delta is undefined."""
    if delta is None or se is None or p_value is None:
        return ""
    size = abs(delta)
    if size < 1.0 or p_value >= ALPHA_LEVEL:
        return "A"
    if size >= 1.5 and se > 0 and (size - 1.0) / se > Z_ONE_SIDED:
        return "C"
    return "B"


def std_p_dif(tables: Sequence[tuple[int, int, int, int]]) -> float | None:
    """Sum of n_Fk (p_Fk - p_Rk) over sum of n_Fk."""
    weight = sum(c + d for _, _, c, d in tables)
    if not weight:
        return None
    return math.fsum((c + d) * (c / (c + d) - a / (a + b)) for a, b, c, d in tables) / weight


def dif(item: str, right: Sequence[bool], languages: Sequence[str], strata: Sequence[float],
        reference: str, focal: str) -> Dif:
    """The DIF of one item between `reference` and `focal` persons (others left out): `right`
    whether each person answered it right, `strata` their total scores."""
    keep = [i for i, la in enumerate(languages) if la in (reference, focal)]
    tables = stratified([right[i] for i in keep], [languages[i] == focal for i in keep],
                        [strata[i] for i in keep])
    alpha, var, chi2, p_value = mantel_haenszel(tables)
    delta = -2.35 * math.log(alpha) if alpha is not None else None
    se = 2.35 * math.sqrt(var) if var is not None else None
    return Dif(item, reference, focal,
               sum(1 for i in keep if languages[i] == reference),
               sum(1 for i in keep if languages[i] == focal),
               alpha, delta, se, chi2, p_value, ets_category(delta, se, p_value),
               std_p_dif(tables))
