import islpy as isl
import pytest
import sympy

from tests import bruteforce
from tiling import dependences, distances
from tiling.isl_utils import enumerate_points, fix_parameters
from tiling.report import dependence_report

k, i, j, kp = sympy.symbols("k i j k'")


def as_pairs(relation: isl.Map) -> set:
    return {(p[:3], p[3:]) for p in enumerate_points(relation.wrap())}


@pytest.mark.parametrize("n", [1, 2, 4])
def test_exact_model_matches_simulation(n):
    computed = dependences.exact_dependences(n)
    expected = bruteforce.exact_pairs(n)
    for name in ("flow", "anti", "output"):
        assert as_pairs(computed.ordered[name]) == expected[name], name


@pytest.mark.parametrize("n", [1, 2, 4])
def test_relaxed_model_matches_definition(n):
    computed = dependences.relaxed_dependences(n)
    expected = bruteforce.relaxed_pairs(n)
    for name, relation in computed.relations().items():
        assert as_pairs(relation) == expected[name], name


@pytest.mark.parametrize("name", ["exact", "relaxed"])
def test_parametric_model_specialises_to_concrete(name):
    parametric = dependences.dependence_model(name, None)
    concrete = dependences.dependence_model(name, 5)
    for relation_name, relation in parametric.relations().items():
        fixed = fix_parameters(relation, {"n": 5}).project_out(isl.dim_type.param, 0, 1)
        assert fixed.is_equal(concrete.relations()[relation_name]), relation_name


def test_relaxed_is_not_a_subset_of_exact_flow():
    # Built from the accesses, R_row names every earlier writer of a[i,k], not only the last one.
    r_row = dependences.relaxed_dependences(4).ordered["R_row"]
    flow = dependences.exact_dependences(4).ordered["flow"]
    assert not r_row.is_subset(flow)
    assert isl.Map("{ S[0, 1, 3] -> S[3, 1, 2] }").is_subset(r_row)


def test_exact_flow_distances():
    vectors = {d.vector for d in distances.distance_vectors(dependences.exact_dependences().ordered["flow"])}
    assert {(1, 0, 0), (1, 0, j - k), (1, i - k, 0)} <= vectors
    # the in-layer ones that the relaxed model drops
    assert {(0, 0, j - k), (0, i - k, 0)} <= vectors


def test_relaxed_distances():
    relaxed = dependences.relaxed_dependences()
    vectors = {name: [d.vector for d in distances.distance_vectors(rel)] for name, rel in relaxed.relations().items()}
    assert vectors == {"R_row": [(k - kp, 0, j - k)], "R_col": [(k - kp, i - k, 0)], "W": [(k - kp, 0, 0)]}


def test_unknown_model_is_named():
    with pytest.raises(ValueError, match="'exact' and 'relaxed'"):
        dependences.dependence_model("pluto")


def test_report_shows_both_models_and_why():
    text = dependence_report(4)
    for needle in ("Exact dependences", "Relaxed dependences", "R_row", "W [exclusive", "(1, 0, j - k)", "Why the exact"):
        assert needle in text


@pytest.mark.parametrize("name", ["exact", "relaxed"])
@pytest.mark.parametrize("n", [None, 3])
def test_a_model_names_itself_and_its_n_and_a_concrete_one_has_no_parameters(name, n):
    """Callers key caches and reports on (name, n), and compose a concrete model's maps with
    other concrete maps: a stray parameter n would make those compositions parametric."""
    found = dependences.dependence_model(name, n)
    assert (found.name, found.n) == (name, n)
    for relation in [*found.relations().values(), *found.generators.values()]:
        assert relation.dim(isl.dim_type.param) == (1 if n is None else 0)
    assert set(found.generators) == ({"W", "R_row", "R_col"} if name == "relaxed" else set())
