"""A bad kernel gives one clear error naming its source line (and what to change), never a traceback."""

from __future__ import annotations

import dataclasses
import inspect

import flash_attention as fa
import numpy as np
import pytest

import dsasim
import dsasim.language as tl
from dsasim import DsasimError
from simulator import load_chip


def bad_line(fn) -> int:
    """The line of ``fn`` marked ``# BAD``."""
    lines, start = inspect.getsourcelines(fn.fn if hasattr(fn, "fn") else fn)
    return start + next(i for i, text in enumerate(lines) if "# BAD" in text)


@dsasim.jit
def data_dependent_if(x_ptr, out_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    if tl.sum(x, axis=0) > 0:  # BAD
        x = x * 2.0
    tl.store(out_ptr + tl.arange(0, BLOCK), x)


@dsasim.jit
def integer_op_on_data(x_ptr, out_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(out_ptr + tl.arange(0, BLOCK), x % 2)  # BAD


@dsasim.jit
def dot_shape_mismatch(a_ptr, b_ptr, c_ptr, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + r[:, None] * BLOCK + r[None, :])
    b = tl.load(b_ptr + tl.arange(0, 16)[:, None] * BLOCK + r[None, :])
    c = tl.dot(a, b)  # BAD
    tl.store(c_ptr + r[:, None] * BLOCK + r[None, :], c)


@dsasim.jit
def broadcast_mismatch(x_ptr, out_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    y = tl.load(x_ptr + tl.arange(0, BLOCK // 2))
    tl.store(out_ptr + tl.arange(0, BLOCK), x + y)  # BAD


@dsasim.jit
def no_mask(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)  # BAD
    tl.store(out_ptr + offs, x, mask=offs < n)


@dsasim.jit
def too_big(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)  # BAD
    tl.store(out_ptr + offs, tl.exp(x) + x)


@dsasim.jit
def gather(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs * offs)  # BAD
    tl.store(out_ptr + offs, x)


@dsasim.jit
def suffix_mask(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs >= 5, other=0.0)  # BAD
    tl.store(out_ptr + offs, x)


@dsasim.jit
def data_mask_and_offsets(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.where((x > 0) & (offs < 10), x, 0.0))  # BAD


@dsasim.jit
def where_on_a_data_tile(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.where(x, x, 0.0))  # BAD


@dsasim.jit
def checkerboard_where(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.where(offs % 2 == 0, x, 0.0))  # BAD


@dsasim.jit
def bitwise_on_data(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.where(x & (x > 1.0), x, 0.0))  # BAD


@dsasim.jit
def bits_of_floats(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, (x.to(tl.int32, bitcast=True) & 0x7FFFFFFF).to(tl.float32))  # BAD


@dsasim.jit
def cast_toward_zero(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.cast(x, tl.float16, fp_downcast_rounding="rtz"))  # BAD


@dsasim.jit
def store_by_value(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, x, mask=x > 0)  # BAD


def run(kernel, n=256, **kw):
    x = np.ones(n, np.float32)
    out = np.zeros(n, np.float32)
    return kernel[(1,)](x, out, **kw)


@pytest.mark.parametrize(
    ("kernel", "kw", "words"),
    [
        (data_dependent_if, {"BLOCK": 256}, "loaded data"),
        (integer_op_on_data, {"BLOCK": 256}, "% takes integer operands, not f32"),
        (broadcast_mismatch, {"BLOCK": 256}, "do not broadcast"),
        (too_big, {"BLOCK": 65536, "n": 65536}, "do not fit"),
        (gather, {"BLOCK": 16, "n": 256}, "not affine"),
        (suffix_mask, {"BLOCK": 256}, "leading block"),
        (data_mask_and_offsets, {"BLOCK": 256}, "combining a mask of loaded data with a mask of offsets"),
        (where_on_a_data_tile, {"BLOCK": 256}, "must be a comparison (a mask), not a data tile"),
        (checkerboard_where, {"BLOCK": 256}, "not a leading block of the tile cut by diagonals"),
        (bitwise_on_data, {"BLOCK": 256}, "combine two masks, or two integer tiles"),
        (bits_of_floats, {"BLOCK": 256}, "bitcast=True is not supported"),  # once the values converted: wrong
        (cast_toward_zero, {"BLOCK": 256}, "fp_downcast_rounding='rtz' is not supported"),
        (store_by_value, {"BLOCK": 256}, "tl.store(y_ptr + offs, tl.where(x > 0, x, tl.load(y_ptr + offs)))"),
    ],
)
@pytest.mark.parametrize("interpret", [False, True])
def test_bad_kernel_names_its_line(kernel, kw, words, interpret):
    if interpret and kernel is too_big:
        pytest.skip("capacity is a property of the chip, not of the interpreter")
    with pytest.raises(DsasimError) as e:
        run(kernel, interpret=interpret, **kw)
    text = str(e.value)
    assert f"test_language_errors.py:{bad_line(kernel)}:" in text
    assert words in text
    assert "hint:" in text


def test_out_of_bounds_without_a_mask():
    with pytest.raises(DsasimError) as e:
        no_mask[(2,)](np.ones(300, np.float32), np.zeros(300, np.float32), 300, BLOCK=256)
    text = str(e.value)
    assert f"test_language_errors.py:{bad_line(no_mask)}:" in text
    assert "x_ptr[300..511] is out of bounds: x_ptr has 300 elements" in text
    assert "mask=offs < n" in text


@dsasim.jit
def unmasked_copy(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)  # BAD
    tl.store(out_ptr + offs, x)


@pytest.mark.parametrize("programs", [8, 24])
def test_out_of_bounds_in_a_stamped_program_names_its_line(programs):
    """Only the last of many programs reads past the end of ``x``, with no mask or guard to tell it apart: the
    programs are stamped from the first ones traced, and a program whose moved access would leave its array is
    traced instead, where the same error, with the kernel's line, is raised as for a traced one."""
    n = programs * 256 - 44
    with pytest.raises(DsasimError) as e:
        unmasked_copy[(programs,)](np.ones(n, np.float32), np.zeros(programs * 256, np.float32), BLOCK=256)
    text = str(e.value)
    assert f"test_language_errors.py:{bad_line(unmasked_copy)}:" in text
    assert f"x_ptr[{n}..{programs * 256 - 1}] is out of bounds: x_ptr has {n} elements" in text


def test_dot_inner_sizes_must_agree():
    a, b = np.ones(32 * 32, np.float16), np.ones(32 * 32, np.float16)
    with pytest.raises(DsasimError) as e:
        dot_shape_mismatch[(1,)](a, b, np.zeros(32 * 32, np.float32), BLOCK=32)
    assert f"test_language_errors.py:{bad_line(dot_shape_mismatch)}:" in str(e.value)
    assert "inner sizes differ" in str(e.value)


def test_launch_mistakes():
    with pytest.raises(DsasimError, match="missing a required argument") as e:
        too_big[(1,)](np.ones(4, np.float32), BLOCK=4)
    assert str(e.value).startswith("cannot launch too_big:")  # no made-up '<launch>:0:' for a line
    with pytest.raises(DsasimError, match=r"array of float64(.|\n)*astype\(np.float32\)"):
        too_big[(1,)](np.ones(4), np.ones(4), BLOCK=4)
    with pytest.raises(DsasimError, match=r"array of int64(.|\n)*astype\(np.int32\)"):  # integers stay integers
        too_big[(1,)](np.ones(4, np.int64), np.ones(4, np.int64), BLOCK=4)
    with pytest.raises(DsasimError, match="launch it over a grid"):
        too_big(np.ones(4, np.float32), np.ones(4, np.float32), BLOCK=4)
    with pytest.raises(DsasimError, match="grid"):
        too_big[(0,)](np.ones(4, np.float32), np.ones(4, np.float32), BLOCK=4)


def test_tl_outside_a_kernel():
    with pytest.raises(DsasimError, match="inside a kernel launch"):
        tl.program_id(0)


@dsasim.jit
def python_mistake(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs).to(tl.float32)
    tl.store(out_ptr + offs, x + x.no_such_attribute)  # BAD


def test_a_python_error_in_the_kernel_names_its_line():
    with pytest.raises(DsasimError) as e:
        run(python_mistake, BLOCK=256)
    text = str(e.value)
    assert f"test_language_errors.py:{bad_line(python_mistake)}:" in text
    assert "AttributeError while tracing program (0,)" in text


def test_too_many_event_ids_name_the_kernel_lines_and_num_stages():
    """Three stages of the K and V tiles FlashAttention hands from MTE2 to MTE1, and the Q tile (loaded once per
    program: it gives up its second slot first), need 7 event ids on that pipe pair; a chip with 6 refuses it. The
    error names the kernel's load lines and the knob (num_stages), not the compiler's buffers."""
    q = np.zeros((1, 256, 64), np.float16)
    six = dataclasses.replace(load_chip("edu"), event_ids=6)
    with pytest.raises(tl.TooManyEventIds) as e:  # its own kind, for a program (the tuner) that counts refusals
        fa.attention(q, q, q, BLOCK_M=64, BLOCK_N=128, num_stages=3, timing_only=True, chip=six)
    text = str(e.value)
    assert "7 event ids on MTE2→MTE1 but the chip has 6" in text
    assert text.startswith("flash_attention.py:") and "tl.load" in text and "L1_" not in text
    assert "num_stages" in e.value.hint
    fa.attention(q, q, q, BLOCK_M=64, BLOCK_N=128, num_stages=3, timing_only=True)  # edu's 8 ids: three stages fit
    fa.attention(q, q, q, BLOCK_M=64, BLOCK_N=128, num_stages=2, timing_only=True)  # two stages fit


@dsasim.jit
def sqrt_checked(x_ptr, y_ptr, n, CHECK: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    if CHECK:
        tl.device_assert((x * 2.0) >= 0, "x must be non-negative", mask=offs < n)  # BAD
        tl.debug_barrier()
    tl.store(y_ptr + offs, tl.sqrt(x), mask=offs < n)


def test_device_assert_is_checked_when_interpreted_and_costs_nothing_on_the_chip():
    # tl.device_assert and tl.debug_barrier were unknown names
    x = np.append(np.arange(100), -1.0).astype(np.float32)  # the last element lies past n: masked, not checked
    runs = [sqrt_checked[(1,)](x, np.zeros(101, np.float32), 100, CHECK=c, BLOCK=128, check=True) for c in (0, 1)]
    assert all(r.check.passed for r in runs)
    assert [i.text() for i in runs[0].program.cores[0]] == [i.text() for i in runs[1].program.cores[0]]
    x[7] = -1.0
    for kw in ({"interpret": True}, {"check": True}):
        with pytest.raises(DsasimError) as e:
            sqrt_checked[(1,)](x, np.zeros(101, np.float32), 100, CHECK=1, BLOCK=128, **kw)
        assert f"test_language_errors.py:{bad_line(sqrt_checked)}:" in str(e.value)
        assert "device assertion failed in program (0, 0, 0): x must be non-negative" in str(e.value)


@dsasim.jit
def int8_dot_into(a_ptr, c_ptr, BLOCK: tl.constexpr, ACC: tl.constexpr):
    r = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + r[:, None] * BLOCK + r[None, :])
    acc = tl.dot(a, a, tl.zeros([BLOCK, BLOCK], ACC))  # BAD
    tl.store(c_ptr + r[:, None] * BLOCK + r[None, :], acc)


@pytest.mark.parametrize(
    ("operand", "acc", "want"), [(np.int8, tl.float32, "tl.int32"), (np.float16, tl.float16, "tl.float32")]
)
def test_a_dot_accumulator_of_the_wrong_type_names_the_right_one(operand, acc, want):
    # the hint said tl.float32 for an int8 product too
    with pytest.raises(DsasimError) as e:
        int8_dot_into[(1,)](np.ones((16, 16), operand), np.zeros((16, 16), np.float32), BLOCK=16, ACC=acc)
    assert f"test_language_errors.py:{bad_line(int8_dot_into)}:" in str(e.value)
    assert f"tl.zeros([16, 16], {want})" in str(e.value)
