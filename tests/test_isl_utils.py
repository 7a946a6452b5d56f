import islpy as isl
import pytest
import sympy

from tiling import isl_utils as iu


def test_point_coordinates():
    point = isl.Set("{ [3, -1] }").sample_point()
    assert iu.point_coordinates(point) == (3, -1)


def test_point_parameters():
    point = isl.Set("[n] -> { [x] : x = n and n = 7 }").sample_point()
    assert iu.point_parameters(point) == {"n": 7}


def test_enumerate_points_sorted():
    assert iu.enumerate_points(isl.Set("{ [x, y] : 0 <= y <= x < 2 }")) == [(0, 0), (1, 0), (1, 1)]


def test_count_points():
    assert iu.count_points(isl.Set("{ [x, y] : 0 <= x, y < 5 }")) == 25


def test_fix_parameters():
    fixed = iu.fix_parameters(isl.Set("[n] -> { [x] : 0 <= x < n }"), {"n": 3})
    assert iu.count_points(fixed.project_out(isl.dim_type.param, 0, 1)) == 3
    with pytest.raises(KeyError):
        iu.fix_parameters(isl.Set("[n] -> { [x] }"), {"m": 1})


def test_smallest_parameter_instance():
    relation = isl.Map("[n] -> { [x] -> [y] : 0 <= x < y < n }")
    smallest = iu.smallest_parameter_instance(relation)
    assert iu.sample_pair(smallest)[2] == {"n": 2}
    # past the scan, isl's own smallest value
    far = isl.Map("[n] -> { [x] -> [y] : 0 <= x < y < n and n >= 1000 }")
    assert iu.sample_pair(iu.smallest_parameter_instance(far, limit=8))[2] == {"n": 1000}


def test_sample_pair_is_lexmin():
    assert iu.sample_pair(isl.Map("{ [x] -> [y] : 2 <= x < y <= 5 }")) == ((2,), (3,), {})


def test_image_of_point():
    assert iu.image_of_point(isl.Map("{ [x, y] -> [x + y, 2x] }"), (2, 3)) == (5, 4)


def test_lex_before_at():
    order = iu.lex_before_at(3, 1)
    assert order.is_equal(isl.Map("{ [a, b, c] -> [a, e, f] : b < e }"))
    with pytest.raises(ValueError):
        iu.lex_before_at(3, 3)


def test_aff_to_sympy_with_floor_and_parameter():
    aff = isl.PwAff("[n] -> { [x, y] -> [(n + 2x - y + floor(x/4))] }").as_aff()
    x, y, n = sympy.symbols("x y n")
    assert sympy.simplify(iu.aff_to_sympy(aff, ("x", "y")) - (n + 2 * x - y + sympy.floor(x / 4))) == 0
