import pytest

from gomoku_archive.catalog.bencode import Bencodable, bencode


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        (0, b"i0e"),
        (-42, b"i-42e"),
        (2**40, b"i1099511627776e"),
        (b"", b"0:"),
        (b"spam", b"4:spam"),
        ("é", b"2:\xc3\xa9"),
        ([], b"le"),
        ([1, b"a", [2]], b"li1e1:ali2eee"),
        ({}, b"de"),
        ({"b": 1, "a": b"x"}, b"d1:a1:x1:bi1ee"),
        # Keys sort as raw bytes: "Z" (0x5a) before "a", "é" (0xc3...) after "z".
        ({"z": 0, "é": 0, "Z": 0, "a": 0}, b"d1:Zi0e1:ai0e1:zi0e2:\xc3\xa9i0ee"),
        ({"info": {"piece length": 262144}}, b"d4:infod12:piece lengthi262144eee"),
    ],
)
def test_bencode(value: Bencodable, encoded: bytes) -> None:
    assert bencode(value) == encoded


@pytest.mark.parametrize("value", [True, 1.5, None, {1, 2}])
def test_what_bencoding_cannot_say(value: object) -> None:
    with pytest.raises(TypeError):
        bencode(value)  # type: ignore[arg-type]
