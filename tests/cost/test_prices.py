from pathlib import Path

import pytest

from gacc_hf.cost.prices import Price, Prices, load_prices, parse_prices

E = "{prompt: 1, completion: 1}"
M = f"  m: {E}\n"  # one good entry


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "prices.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_prices_file_is_read_and_looked_up_by_spec_then_name_then_model(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "currency: USD\nprices:\n  deepseek-v4-pro: {prompt: 0.55, completion: 2.19}\n"
        "  'openai:judge@http://h:1/v1': {prompt: 0, completion: 0.4}\n  本地模型: {prompt: 1, completion: 1}\n",
    )
    prices = load_prices(path)
    assert prices.currency == "USD" and prices.source == str(path)
    assert prices.find(["openai:judge@http://h:1/v1", "openai:judge", "judge"]) == Price(0.0, 0.4)
    assert prices.find(["openai:x@http://h:1/v1", None, "deepseek-v4-pro"]) == Price(0.55, 2.19)
    assert prices.find(["本地模型"]) == Price(1.0, 1.0)
    assert prices.find(["truncate", "", None]) is None
    # 1.2 M prompt tokens at 0.55 and 300 k completion tokens at 2.19 per million: 0.66 + 0.657, by hand
    assert Price(0.55, 2.19).cost(1_200_000, 300_000) == pytest.approx(1.317)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("prices:\n  m: {prompt: -0.1, completion: 1}\n", "prices.m.prompt: -0.1 is negative"),
        ("prices:\n  m: {prompt: '0.5', completion: 1}\n", "prices.m.prompt: '0.5' is not a number"),
        ("prices:\n  m: {prompt: $0.5, completion: 1}\n", "prices.m.prompt: '$0.5' is not a number"),
        ("prices:\n  m: {prompt: .nan, completion: 1}\n", "prices.m.prompt: nan is not a number"),
        ("prices:\n  m: {prompt: true, completion: 1}\n", "prices.m.prompt: True is not a number"),
        ("prices:\n  m: {prompt: 1}\n", "prices.m: missing completion"),
        ("prices:\n  m: {prompt: 1, completion: 1, input: 2}\n", "prices.m: unknown key input"),
        ("prices:\n  m: 0.5\n", "prices.m: expected {prompt: <number>, completion: <number>}"),
        ("prices: {}\n", "`prices:` is empty"),
        ("m: {prompt: 1, completion: 1}\n", "expected a mapping with a `prices:` mapping"),
        ("price: 1\nprices:\n  m: {prompt: 1, completion: 1}\n", "unknown top-level key(s) price"),
        ("currency: 5\nprices:\n  m: {prompt: 1, completion: 1}\n", "currency must be a code of three letters"),
        (f"prices:\n{M}  m: {{prompt: 2, completion: 2}}\n", "prices.m is given twice (lines 2 and 3)"),
        (f"prices:\n{M}  'm': {{prompt: 2, completion: 2}}\n", "prices.m is given twice"),
        (f"prices:\n  本地模型: {E}\n{M}  本地模型: {E}\n", "prices.本地模型 is given twice (lines 2 and 4)"),
        ("prices:\n  m: {prompt: 1, completion: 1, prompt: 2}\n", "prices.m.prompt is given twice (lines 2 and 2)"),
        (f"currency: USD\nprices:\n{M}currency: EUR\n", "currency is given twice (lines 1 and 4)"),
        ("prices:\n  m: {prompt: 1.7e+308, completion: 1}\n", "prices.m.prompt: 1.7e+308 is over 1e+09"),
        ("prices:\n  m: {prompt: 1, completion: .inf}\n", "prices.m.completion: inf is over 1e+09"),
        ("prices:\n  m: {prompt: 1000000001, completion: 1}\n", "prices.m.prompt: 1000000001 is over 1e+09"),
        ("prices:\n  m: {prompt: " + "9" * 400 + ", completion: 1}\n", "prompt: a number of 301 digits or more"),
        ("prices:\n  m: [1, 2]\n", "prices.m: expected {prompt: <number>, completion: <number>}, got a list"),
        ("prices: [\n", "not valid YAML"),
    ],
)
def test_a_bad_prices_file_is_refused_naming_the_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(ValueError, match="prices") as err:
        load_prices(path)
    assert message in str(err.value) and str(path) in str(err.value)


@pytest.mark.parametrize("currency", ["sk-proj-0123456789abcdefghijklmnop", "US$", "dollars", "€€", "12", "[USD]"])
def test_a_currency_that_is_no_code_or_sign_is_refused_without_repeating_it(tmp_path: Path, currency: str) -> None:
    path = _write(tmp_path, f"currency: '{currency}'\nprices:\n  m: {{prompt: 1, completion: 1}}\n")
    with pytest.raises(ValueError, match="currency must be a code of three letters") as err:
        load_prices(path)
    assert str(path) in str(err.value) and currency not in str(err.value).replace(str(path), "")


@pytest.mark.parametrize(
    ("currency", "kept"), [("USD", "USD"), ("cny", "cny"), (" EUR ", "EUR"), ("€", "€"), ("¥", "¥")]
)
def test_a_currency_code_or_sign_is_taken(tmp_path: Path, currency: str, kept: str) -> None:
    path = _write(tmp_path, f"currency: '{currency}'\nprices:\n  m: {{prompt: 1, completion: 1}}\n")
    assert load_prices(path).currency == kept


def test_prices_up_to_the_bound_are_taken(tmp_path: Path) -> None:
    path = _write(
        tmp_path, "prices:\n  a: {prompt: 1000000000, completion: 0}\n  本地模型: {prompt: 1000000000, completion: 0}\n"
    )
    prices = load_prices(path)
    assert prices.find(["a"]) == prices.find(["本地模型"]) == Price(1e9, 0.0)
    # the largest prices on the largest counts a server may report stay a finite cost: 10^12 tokens at 10^9
    assert Price(1e9, 1e9).cost(10**12, 10**12) == 2e15
    with pytest.raises(ValueError, match="prompt price: inf is over 1e"):
        Price(float("inf"), 0)


def test_a_shared_anchor_is_refused_as_every_yaml_alias_is(tmp_path: Path) -> None:
    path = _write(tmp_path, "prices:\n  a: &p {prompt: 1, completion: 0}\n  b: *p\n")
    with pytest.raises(ValueError, match=r"line 3: YAML aliases \(\*name\) are not allowed in a prices file"):
        load_prices(path)


def test_a_missing_prices_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"--prices .*nope.yaml: cannot read it"):
        load_prices(tmp_path / "nope.yaml")


def test_zero_prices_are_allowed_and_cost_nothing() -> None:
    prices = parse_prices({"prices": {"truncate": {"prompt": 0, "completion": 0}}})
    assert isinstance(prices, Prices) and prices.find(["truncate"]).cost(10**9, 10**9) == 0.0


def test_prices_built_in_python_are_checked_as_a_file_is() -> None:
    with pytest.raises(ValueError, match="<prices>: currency must be a code of three letters") as err:
        Prices({"m": Price(1, 1)}, "sk-proj-0123456789")
    assert "sk-proj" not in str(err.value)
    assert Prices({"m": Price(1, 1)}, "¥").currency == "¥"
