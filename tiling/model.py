"""The Floyd–Warshall loop nest as isl objects.

    for k, i, j in [0, n)^3:   S[k,i,j]:  a[i,j] = min(a[i,j], a[i,k] + a[k,j])

Every object is built parametric in n (n=None) or for one concrete n, from
the same text, so the two can never drift apart.
"""
from __future__ import annotations

import islpy as isl

STATEMENT = "S"
ARRAY = "a"
ITERATORS = ("k", "i", "j")

#: The three reads of S[k,i,j]: name -> subscript of a.
READS = {"a[i,j]": "i, j", "a[i,k]": "i, k", "a[k,j]": "k, j"}


def _validate_n(n: int | None) -> None:
    if n is not None and (not isinstance(n, int) or isinstance(n, bool) or n < 1):
        raise ValueError(f"n must be a positive int or None (parametric), got {n!r}")


def _prefix(n: int | None) -> str:
    return "[n] -> " if n is None else ""


def domain(n: int | None = None) -> isl.Set:
    """The iteration domain { S[k,i,j] : 0 <= k,i,j < n }."""
    _validate_n(n)
    bound = "n" if n is None else str(n)
    text = f"S[k, i, j] : 0 <= k < {bound} and 0 <= i < {bound} and 0 <= j < {bound}"
    return isl.Set(_prefix(n) + "{ " + text + " }")


def _access(element: str, n: int | None) -> isl.Map:
    return isl.Map(f"{_prefix(n)}{{ S[k, i, j] -> {ARRAY}[{element}] }}").intersect_domain(domain(n))


def write_access(n: int | None = None) -> isl.Map:
    """S[k,i,j] writes a[i,j]."""
    return _access("i, j", n)


def read_access(name: str, n: int | None = None) -> isl.Map:
    """One of the three reads of S[k,i,j]: name is 'a[i,j]', 'a[i,k]' or 'a[k,j]'."""
    if name not in READS:
        raise ValueError(f"unknown read {name!r}; valid reads are {', '.join(READS)}")
    return _access(READS[name], n)


def read_accesses(n: int | None = None) -> isl.Map:
    """All reads of S[k,i,j] as one relation."""
    reads = [read_access(name, n) for name in READS]
    union = reads[0]
    for r in reads[1:]:
        union = union.union(r)
    return union.coalesce()


def sequential_schedule(n: int | None = None) -> isl.Map:
    """The original execution order: S[k,i,j] -> [k,i,j]."""
    return isl.Map(f"{_prefix(n)}{{ S[k, i, j] -> [k, i, j] }}").intersect_domain(domain(n))
