"""The dependence analysis as text: relations, distance vectors, and why they matter."""
from __future__ import annotations

from .dependences import dependence_model
from .distances import distance_vectors

WHY = """\
Why the exact model forbids 3-D tiling and the relaxed one allows it.
In the exact model a layer depends on itself: S[k,i,j] with j > k must
follow S[k,i,k], which updates the a[i,k] it reads (distance (0, 0, j - k)),
while S[k,i,j] with j < k must read a[i,k] before S[k,i,k] overwrites it
(an anti dependence pointing the other way). Inside one block layer the
pivot-column tile and any other tile of its block row are therefore
ordered both ways, and the components j - k and i - k take both signs, so
no order of rectangular (k, i, j) tiles respects every dependence. The
relaxed model uses what min/+ guarantees: an in-layer update of a[i,k] or
a[k,j] is a no-op while a[k,k] >= 0, and reading a value that is newer
than needed is harmless because values only decrease. S[k,i,j] then only
needs every update of a[i,k] and a[k,j] from earlier layers (R_row, R_col:
k-distance k - k' >= 1), and updates of one element must not overlap (W).
Those point forward in k and out of the pivot row and column, so the
blocked order - pivot tile, then its row and column, then the rest, per
block layer - respects them.
"""


def dependence_report(n: int | None = None) -> str:
    """Both models for one n (None: parametric), as printable text."""
    lines = [f"Floyd-Warshall nest, n = {'parametric' if n is None else n}",
             "  S[k,i,j]: a[i,j] = min(a[i,j], a[i,k] + a[k,j])", ""]
    for name, title in (("exact", "Exact dependences (isl dataflow on the sequential order)"),
                        ("relaxed", "Relaxed dependences (min/+ semantics; sound, not complete)")):
        model = dependence_model(name, n)
        lines.append(title)
        for relation_name, relation in model.relations().items():
            kind = "exclusive (no concurrent pair)" if relation_name in model.exclusive else "source before sink"
            lines.append(f"  {relation_name} [{kind}]:")
            lines.append(f"    {relation}")
            vectors = ", ".join(str(d) for d in distance_vectors(relation)) or "none"
            lines.append(f"    distances (in sink coordinates k, i, j): {vectors}")
        lines.append("")
    lines.append(WHY)
    return "\n".join(lines)
