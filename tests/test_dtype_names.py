"""Data types by the names users write: dsasim's own, and numpy's, PyTorch's and Triton's aliases."""

import pytest

from dsasim.cli import main
from isa import DType


@pytest.mark.parametrize(
    "text, dtype",
    [("f16", DType.F16), ("float16", DType.F16), ("FP16", DType.F16), (" half ", DType.F16),
     ("bfloat16", DType.BF16), ("fp32", DType.F32), ("float32", DType.F32), ("int8", DType.I8), ("int32", DType.I32)],
)  # fmt: skip
def test_named_reads_names_and_aliases(text: str, dtype: DType) -> None:
    assert DType.named(text) is dtype


@pytest.mark.parametrize("text, guess", [("flot16", "f16"), ("bfloat", "bf16"), ("int32_", "i32")])
def test_a_near_miss_is_told_the_closest_name(text: str, guess: str) -> None:
    with pytest.raises(ValueError, match=f"did you mean {guess}\\?"):
        DType.named(text)


def test_an_unsupported_type_lists_the_names_without_a_wrong_guess() -> None:
    with pytest.raises(ValueError) as e:
        DType.named("f64")
    assert "did you mean" not in str(e.value) and "f16, bf16, f32, i8, i32" in str(e.value)


def test_the_cli_takes_an_alias_and_explains_a_miss(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "matmul", "--shape", "16x16x16", "--dtype", "float16", "--timing-only"]) == 0
    capsys.readouterr()
    assert main(["run", "add", "--shape", "8x8", "--dtype", "flot32"]) == 2
    err = capsys.readouterr().err
    assert "--dtype 'flot32' is not a data type" in err and "did you mean f32?" in err and "Traceback" not in err
