import islpy as isl
import pytest

from tiling import model
from tiling.isl_utils import count_points, enumerate_points, fix_parameters


def test_domain_has_n_cubed_points():
    assert count_points(model.domain(4)) == 64


def test_parametric_domain_specialises_to_concrete():
    fixed = fix_parameters(model.domain(None), {"n": 3}).project_out(isl.dim_type.param, 0, 1)
    assert fixed.is_equal(model.domain(3))


def test_write_access():
    image = model.write_access(4).intersect_domain(isl.Set("{ S[1, 2, 0] }")).range()
    assert enumerate_points(image) == [(2, 0)]


@pytest.mark.parametrize("name, element", [("a[i,j]", (2, 0)), ("a[i,k]", (2, 1)), ("a[k,j]", (1, 0))])
def test_read_accesses(name, element):
    image = model.read_access(name, 4).intersect_domain(isl.Set("{ S[1, 2, 0] }")).range()
    assert enumerate_points(image) == [element]


def test_all_reads_union():
    image = model.read_accesses(4).intersect_domain(isl.Set("{ S[1, 2, 0] }")).range()
    assert enumerate_points(image) == [(1, 0), (2, 0), (2, 1)]


def test_bad_inputs_are_named():
    with pytest.raises(ValueError, match="valid reads"):
        model.read_access("a[j,i]")
    with pytest.raises(ValueError, match="positive int"):
        model.domain(0)
