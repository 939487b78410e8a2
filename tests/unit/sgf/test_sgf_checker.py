"""The semantic checker: exact findings (code, line, column, node) for each rule."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gomoku_archive.sgf import (
    FINDING_CODES,
    MAX_LISTED_FINDINGS,
    BoardSize,
    CheckReport,
    check_chunks,
    check_sgf,
    parse,
    resolve_root,
)
from gomoku_archive.sgf.checker import _GameChecker
from tests.budget import examples

Row = tuple[str, int, int, str]


def found(data: bytes) -> list[Row]:
    report = check_sgf(data)
    assert report.parse_error is None
    return [(f.code, f.line, f.column, f.node_path) for f in report.findings]


# The five records of the board-size guide (seeds/000), with the findings they must produce.
GUIDE_RECORDS = [
    (b"(;FF[4]GM[1]CA[UTF-8]C[Original empty Go record with no SZ.])", BoardSize(19, 19), []),
    (b"(;FF[4]GM[1]CA[UTF-8]SZ[9]C[Original empty9x9 record.])", BoardSize(9, 9), []),
    (b"(;FF[4]GM[1]CA[UTF-8]SZ[9:13]AB[im])", BoardSize(9, 13), []),
    (b"(;FF[4]GM[1]CA[UTF-8]SZ[9:9])", BoardSize(9, 9), [("SZ002", 1, 22, "1:0")]),
    (b"(;FF[4]GM[1]SZ[19];SZ[9])", BoardSize(19, 19), [("SZ001", 1, 20, "1:1")]),
]


@pytest.mark.parametrize(("data", "size", "expected"), GUIDE_RECORDS)
def test_the_board_size_guide_records(data: bytes, size: BoardSize, expected: list[Row]) -> None:
    report = check_sgf(data)
    assert (report.parse_error, report.games) == (None, 1)
    assert [(f.code, f.line, f.column, f.node_path) for f in report.findings] == expected
    assert all(f.severity == "error" for f in report.findings)
    assert resolve_root(parse(data)[0].nodes[0]).size == size


def test_the_guide_records_as_one_collection_keep_their_own_sizes() -> None:
    data = b"\n".join(record for record, _, _ in GUIDE_RECORDS)
    report = check_sgf(data)
    assert report.games == 5
    assert [(f.code, f.line, f.node_path) for f in report.findings] == [
        ("SZ002", 4, "4:0"),
        ("SZ001", 5, "5:1"),
    ]


def test_a_valid_gomoku_profile_line_has_no_findings() -> None:
    assert found(b"(;FF[4]GM[4]CA[UTF-8]SZ[15]RE[B+R];B[hh];W[ih];B[ii])") == []


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        # SZ: root only, square form, numbers, Go's 1..52 per axis, Gomoku's assumed 15x15.
        (b"(;GM[1]SZ[19];B[aa];SZ[9])", [("SZ001", 1, 21, "1:2")]),
        (b"(;FF[4]GM[1]SZ[9:9])", [("SZ002", 1, 13, "1:0")]),
        (b"(;GM[1]SZ[nine];B[aa])", [("SZ003", 1, 8, "1:0")]),
        (b"(;SZ[9][13])", [("SZ003", 1, 3, "1:0")]),
        (b"(;SZ[0])", [("SZ003", 1, 3, "1:0")]),
        (b"(;GM[1]SZ[53:60])", [("SZ004", 1, 8, "1:0")]),
        (b"(;GM[1]SZ[52:53])", [("SZ004", 1, 8, "1:0")]),
        (b"(;GM[1]SZ[52])", []),
        (b"(;GM[3]SZ[60])", []),
        (b"(;FF[4]GM[4];B[hh])", [("SZ005", 1, 2, "1:0")]),
        # Points: inside THIS game's board; passes; setup; rectangles; uniqueness.
        (b"(;GM[1]SZ[9:13];B[ja];W[an])", [("PT001", 1, 17, "1:1"), ("PT001", 1, 23, "1:2")]),
        (b"(;GM[1]SZ[9:13];B[im];W[ai])", []),
        (b"(;SZ[9]AB[aa:jj])", [("PT001", 1, 8, "1:0")]),
        (b"(;SZ[9]AB[aa:ii])", []),
        (b"(;;B[sa];W[as];B[ta])", [("PT001", 1, 16, "1:3")]),  # t is the 20th column
        (b"(;SZ[9];B[a];W[a1])", [("PT002", 1, 9, "1:1"), ("PT002", 1, 14, "1:2")]),
        (b"(;SZ[19]AB[]AW[tt])", [("PT003", 1, 9, "1:0"), ("PT003", 1, 13, "1:0")]),
        (b"(;SZ[25]AB[tt];B[tt])", []),
        (b"(;SZ[19];B[];W[tt])", []),
        (b"(;SZ[19]AB[aa:aa][cc:bb])", [("PT004", 1, 9, "1:0"), ("PT004", 1, 9, "1:0")]),
        (b"(;SZ[19]AB[aa:bb]AW[bb]AE[cc][cc])", [("PT005", 1, 18, "1:0"), ("PT005", 1, 24, "1:0")]),
        (
            b"(;SZ[9];B[aa]CR[jj]LB[kk:x]AR[aa:zz]TR[]VW[])",
            [
                ("PT001", 1, 14, "1:1"),
                ("PT001", 1, 20, "1:1"),
                ("PT001", 1, 28, "1:1"),
                ("PT002", 1, 37, "1:1"),
            ],
        ),
        (
            b"(;SZ[9];B[aa]LB[aa]AR[bb:bb]MA[aa:ab])",
            [("VL001", 1, 14, "1:1"), ("VL001", 1, 20, "1:1")],
        ),
        # Node structure.
        (b"(;SZ[19];AB[aa]B[bb])", [("ND001", 1, 16, "1:1")]),
        (b"(;SZ[19];PL[B]MN[3])", [("ND001", 1, 15, "1:1")]),
        (b"(;SZ[19];B[aa]W[bb])", [("ND002", 1, 15, "1:1")]),
        (
            b"(;FF[4];B[aa]FF[4]GM[1]CA[UTF-8]AP[x:1]ST[1])",
            [
                ("ND003", 1, 14, "1:1"),
                ("ND003", 1, 19, "1:1"),
                ("ND003", 1, 24, "1:1"),
                ("ND003", 1, 33, "1:1"),
                ("ND003", 1, 40, "1:1"),
            ],
        ),
        (b"(;GM[1](;SZ[9]))", [("SZ001", 1, 10, "1:1")]),
        (
            b"(;C[a]C[b];B[aa]AddBlack[bb]AB[cc])",
            [
                ("ND004", 1, 7, "1:0"),
                ("ND001", 1, 12, "1:1"),
                ("ID001", 1, 17, "1:1"),
                ("ND004", 1, 29, "1:1"),
            ],
        ),
        (
            b"(;PB[x](;PW[y];B[aa];GN[z])(;B[bb]PC[here]))",
            [
                ("ND005", 1, 10, "1:1"),
                ("ND005", 1, 22, "1:3"),
                ("ND005", 1, 35, "1:4"),
            ],
        ),
        (b"(;GM[1](;PB[x];B[aa])(;PB[y];B[aa]))", []),  # merged games: one per path
        (b"(;B[aa])", [("ND006", 1, 3, "1:0")]),
        (b"(;SZ[19];KO[];B[aa]KO[];TE[1])", [("ND007", 1, 10, "1:1"), ("ND007", 1, 25, "1:3")]),
        # Values.
        (
            b"(;FF[5]GM[x]ST[4]PL[X];B[aa][bb]BM[3]MN[1.5]KM[6.5]DO[x])",
            [
                ("VL001", 1, 3, "1:0"),
                ("VL001", 1, 8, "1:0"),
                ("VL001", 1, 13, "1:0"),
                ("VL001", 1, 18, "1:0"),
                ("VL002", 1, 24, "1:1"),
                ("VL001", 1, 33, "1:1"),
                ("VL001", 1, 38, "1:1"),
                ("VL001", 1, 52, "1:1"),
            ],
        ),
        (b"(;RE[Black wins])", [("VL003", 1, 3, "1:0")]),
        (
            b"(;RE[B+12.5]PB[a]PW[b]KM[-0.5]HA[2]TM[600])(;RE[0])(;RE[Void])(;RE[?])(;RE[W+F])"
            b"(;RE[B+Time])(;RE[Draw])",
            [],
        ),
        # Identifiers and charsets.
        (b"(;AddBlack[aa];White[bb])", [("ID001", 1, 3, "1:0")]),
        (b"(;CA[klingon]C[x])", [("CA001", 1, 3, "1:0")]),
        (b"(;CA[UTF-16]C[x])", [("CA001", 1, 3, "1:0")]),
        ("(;CA[UTF-8];C[caf\xe9];N[\xe9])".encode("latin-1"), [("CA002", 1, 13, "1:1")]),
        ("(;C[caf\xe9])".encode("latin-1"), []),  # no CA: FF[4]'s own default, latin-1
        ("(;CA[UTF-8]C[caf\xe9 \u68cb])".encode(), []),
    ],
)
def test_each_rule_reports_exactly_where(data: bytes, expected: list[Row]) -> None:
    assert found(data) == expected


@pytest.mark.parametrize(
    ("moves", "result", "expected"),
    [
        (";B[hh];B[ii]", "B+R", [("GK001", 2)]),
        (";B[hh];W[ii];B[hh]", "B+R", [("GK002", 3)]),
        (";B[hh];W[];B[ii];W[tt]", "B+R", [("GK003", 2), ("GK003", 4)]),
        (";B[aa];W[ba];B[ab];W[bb];B[ac];W[bc];B[ad];W[bd];B[ae];W[be]", "B+", [("GK004", 10)]),
        (";B[aa];W[ba];B[ab];W[bb];B[ac];W[bc];B[ad];W[bd];B[ae]", "B+", []),
        # An overline (six in a column, completed in the middle) is a five too.
        (";B[aa];W[ba];B[ab];W[bb];B[ad];W[bc];B[ae];W[bd];B[af];W[oo];B[ac]", "B+", []),
        # Diagonals both ways.
        (";B[aa];W[oa];B[bb];W[ob];B[cc];W[oc];B[dd];W[od];B[ee]", "B+", []),
        (";B[ae];W[oa];B[bd];W[ob];B[cc];W[oc];B[db];W[od];B[ea]", "B+", []),
        (";B[hh];W[ih]", "B+", [("GK005", 0)]),
        (";B[aa];W[ba];B[ab];W[bb];B[ac];W[bc];B[ad];W[bd];B[ae]", "W+R", [("GK005", 0)]),
        (";B[aa];W[ba];B[ab];W[bb];B[ac];W[bc];B[ad];W[bd];B[ae]", "Draw", [("GK005", 0)]),
        (";B[aa];W[ba];B[ab];W[bb];B[ac];W[bc];B[ad];W[bd];B[ae]", "0", [("GK005", 0)]),
        (";B[aa];W[ba];B[ab];W[bb];B[ac];W[bc];B[ad];W[bd];B[ae]", "B+T", [("GK005", 0)]),
        (";B[aa];W[ba];B[ab];W[bb];B[ac];W[bc];B[ad];W[bd];B[ae]", "B+Resign", [("GK005", 0)]),
        (";B[aa];W[ba];B[ab];W[bb];B[ac];W[bc];B[ad];W[bd];B[ae]", "?", []),
        # White's five wins for White; a resignation before any five is fine.
        (";B[oo];W[ba];B[ab];W[bb];B[ac];W[bc];B[ad];W[bd];B[ae];W[be]", "W+", []),
        (";B[hh];W[ih];B[hi]", "W+R", []),
        (";B[hh];W[ih];B[hi]", "Draw", []),
        # Only the main line is replayed: the variation's B-after-B is not a turn error.
        (";B[hh](;W[ih])(;B[ii])", "B+R", []),
    ],
)
def test_gomoku_main_line_replay(moves: str, result: str, expected: list[tuple[str, int]]) -> None:
    data = f"(;FF[4]GM[4]CA[UTF-8]SZ[15]RE[{result}]{moves})".encode()
    rows = found(data)
    assert [(code, int(node.split(":")[1])) for code, _, _, node in rows] == expected
    for code, line, column, _ in rows:
        if code == "GK005":
            assert (line, column) == (1, 28)  # the RE property


def test_gomoku_setup_stones_and_pl_count() -> None:
    assert found(b"(;GM[4]SZ[15]AB[hh]PL[W];W[ii];B[jj])") == []
    assert found(b"(;GM[4]SZ[15]PL[W];B[hh])") == [("GK001", 1, 20, "1:1")]
    assert found(b"(;GM[4]SZ[15]AB[hh];W[ii];B[ii])") == [("GK002", 1, 27, "1:2")]
    # AE clears a point, so playing there is fine.
    assert found(b"(;GM[4]SZ[15]AB[hh];AE[hh];W[hh])") == []


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        # Freestyle Gomoku starts with Black: White opening is a warning (the export's replay
        # calls it turn_order), on the fast path of runs of moves too.
        (b"(;GM[4]SZ[15];W[hh])", [("GK006", 1, 15, "1:1")]),
        (b"(;GM[4]SZ[15];W[hh];B[ii];W[jj];B[kk])", [("GK006", 1, 15, "1:1")]),
        (b"(;GM[4]SZ[15]\n;W[hh];B[ii])", [("GK006", 2, 2, "1:1")]),
        (b"(;GM[4]SZ[15];W[hh];W[ii])", [("GK006", 1, 15, "1:1"), ("GK001", 1, 21, "1:2")]),
        (b"(;GM[4];W[hh])", [("SZ005", 1, 2, "1:0"), ("GK006", 1, 9, "1:1")]),
        # ... but PL[W] or setup stones say who is to play; and Go is not Gomoku.
        (b"(;GM[4]SZ[15]PL[W];W[hh];B[ii])", []),
        (b"(;GM[4]SZ[15]AB[aa];W[hh];B[ii])", []),
        (b"(;GM[4]SZ[15];AW[aa];W[hh])", []),
        (b"(;GM[1]SZ[19];W[hh])", []),
        # Only the main line's first move: a variation's White is its own business.
        (b"(;GM[4]SZ[15](;B[hh])(;W[hh]))", []),
        (b"(;GM[4]SZ[15](;W[hh])(;B[hh]))", [("GK006", 1, 16, "1:1")]),
    ],
)
def test_white_moving_first_in_gomoku_is_a_warning(
    data: bytes, expected: list[tuple[str, int, int, str]]
) -> None:
    assert found(data) == expected
    report = check_sgf(data)
    if expected and all(code == "GK006" for code, *_ in expected):
        assert (report.errors, report.warnings) == (0, 1)
        assert report.findings[0].message == (
            "W[hh] is the first move: freestyle Gomoku starts with Black "
            "(no PL or setup stones let White open)"
        )


def test_gomoku_messages_name_the_problem() -> None:
    report = check_sgf(
        b"(;GM[4]SZ[15]RE[W+R];B[aa];W[ba];B[ab];W[bb];B[ac];W[bc];B[ad];W[bd];B[ae])"
    )
    assert [f.message for f in report.findings] == [
        "RE[W+R] names White the winner, but Black made five at ae (node 9)"
    ]


def test_each_game_is_checked_against_its_own_root() -> None:
    data = b"(;GM[1]SZ[9];B[ii])(;GM[4];B[ii];W[jj])(;SZ[5];B[ff])(;GM[4]SZ[15];B[ff];B[gg])"
    assert found(data) == [
        ("SZ005", 1, 21, "2:0"),
        ("PT001", 1, 48, "3:1"),
        ("GK001", 1, 74, "4:2"),
    ]


def test_findings_carry_severity_from_the_code_table() -> None:
    report = check_sgf(b"(;FF[4]GM[4];B[hh];B[ii])")
    assert [(f.code, f.severity) for f in report.findings] == [
        ("SZ005", "warning"),
        ("GK001", "error"),
    ]
    assert (report.errors, report.warnings) == (1, 1)
    assert all(f.severity == FINDING_CODES[f.code].severity for f in report.findings)


def test_a_parse_error_is_reported_apart_and_earlier_games_are_still_checked() -> None:
    report = check_sgf(b"(;SZ[9:9])\n(;B[aa]\n(;W[bb")
    assert report.games == 1
    assert report.parse_error is not None
    assert (report.parse_error.line, report.parse_error.column) == (3, 4)
    assert [(f.code, f.node_path) for f in report.findings] == [("SZ002", "1:0")]
    assert (report.errors, report.warnings) == (2, 0)


def test_an_empty_file_is_a_parse_error() -> None:
    report = check_sgf(b"")
    assert report == CheckReport(report.parse_error, 0, ())
    assert report.parse_error is not None and report.errors == 1


def test_chunked_checking_matches_whole_checking() -> None:
    data = b"(;GM[1]SZ[9];B[ii])(;GM[4];B[ii];W[jj])\r\n(;SZ[5];B[ff])"
    chunks = [data[i : i + 3] for i in range(0, len(data), 3)]
    assert check_chunks(chunks) == check_sgf(data)


def test_the_record_is_not_modified() -> None:
    data = bytearray(b"(;SZ[9:9];B[zz])")
    check_sgf(bytes(data))
    assert data == b"(;SZ[9:9];B[zz])"


@pytest.mark.slow  # a 100,000-move game: seconds
def test_a_100000_move_main_line_is_checked_without_recursion() -> None:
    depth = 100_000
    nested = b"(;B[aa]" * depth + b")" * (depth + 1)
    go = check_sgf(b"(;GM[1]SZ[19]" + nested)
    assert (go.parse_error, go.games, go.findings) == (None, 1, ())
    # Gomoku: every move after the first is Black again, on the same point.
    gomoku = check_sgf(b"(;GM[4]SZ[15]" + nested)
    assert (gomoku.errors, gomoku.warnings) == (2 * (depth - 1), 0)
    assert {f.code for f in gomoku.findings} == {"GK001", "GK002"}
    # Only the first findings are kept: the rest are counted.
    assert len(gomoku.findings) == MAX_LISTED_FINDINGS
    assert gomoku.unlisted == 2 * (depth - 1) - MAX_LISTED_FINDINGS
    assert gomoku.findings[-1].node_path == f"1:{MAX_LISTED_FINDINGS // 2 + 1}"
    everything = check_chunks([b"(;GM[4]SZ[15]" + nested], max_listed=10**6)
    assert len(everything.findings) == 2 * (depth - 1)
    assert everything.findings[-1].node_path == f"1:{depth}"


@pytest.mark.parametrize(
    ("data", "codes"),
    [
        (b"(;GM[" + b"9" * 5000 + b"])", []),
        (b"(;GM[1]SZ[" + b"9" * 5000 + b":" + b"9" * 5000 + b"])", ["SZ002", "SZ004"]),
        (b"(;GM[1]SZ[" + b"9" * 5000 + b"])", ["SZ004"]),
        (b"(;FF[" + b"9" * 5000 + b"]MN[-" + b"9" * 5000 + b"])", ["VL001"]),
    ],
)
def test_numbers_too_long_for_int_do_not_break_the_checker(data: bytes, codes: list[str]) -> None:
    assert [code for code, _, _, _ in found(data)] == codes


@given(st.text(alphabet="();[]\\ABWGMSZCKOPLTEab019:+\n ", max_size=150))
@settings(max_examples=examples(500))
def test_the_checker_never_raises(text: str) -> None:
    report = check_sgf(text.encode())
    assert report.games >= 0
    for finding in report.findings:
        assert finding.code in FINDING_CODES
        assert finding.line >= 1 and finding.column >= 1


def test_messages_quote_long_values_shortened() -> None:
    report = check_sgf(b"(;SZ[19];B[aa]DO[" + b"x" * 100_000 + b"])")
    [finding] = report.findings
    assert finding.message == "DO[" + "x" * 37 + "...] should be an empty value"


# --- runs of plain moves taken at once -----------------------------------------------------------

ROOTS = st.sampled_from(
    [
        "(;GM[4]SZ[15]RE[B+]",
        "(;GM[4]SZ[15]RE[W+R]",
        "(;FF[4]GM[4]CA[UTF-8]SZ[15]RE[Draw]",
        "(;GM[4]SZ[15]",
        "(;GM[4]SZ[15]AB[ii][jj]RE[B+]",
        "(;GM[4]SZ[15]AB[hh][ih][jh][kh]RE[B+]",  # four in a row from setup stones
        "(;GM[4]SZ[15]AW[ii]AE[ii]PL[W]RE[W+]",
        "(;GM[4]SZ[15]PL[W]",
        "(;GM[4]",
        "(;GM[4]SZ[7]RE[B+]",
        "(;GM[4]SZ[25]RE[B+]",
        "(;GM[1]SZ[19]",
        "(;GM[1]SZ[9]",
        "(;GM[2]",
    ]
)
ODD_NODES = st.sampled_from(
    [";B[]", ";W[tt]", ";B[zz]", ";W[hh]C[x]", ";B[hh]\n", "\n;W[ii]", ";AB[gg]", ";PL[B]", ";"]
)


@st.composite
def move_nodes(draw: st.DrawFn) -> str:
    nodes = []
    colour = draw(st.sampled_from("BW"))
    for _ in range(draw(st.integers(0, 30))):
        kind = draw(st.integers(0, 20))
        if kind == 0:
            nodes.append(draw(ODD_NODES))
            continue
        if kind == 1:
            colour = "BW"[colour == "B"]  # the same colour twice
        if kind == 2:  # five on column a, the other colour answering on column c
            other = "BW"[colour == "B"]
            nodes.append("".join(f";{colour}[a{r}];{other}[c{r}]" for r in "abcd"))
            nodes.append(f";{colour}[ae]")
            colour = other
            continue
        point = draw(st.sampled_from("fghij")) + draw(st.sampled_from("fghij"))
        nodes.append(f";{colour}[{point}]")
        colour = "BW"[colour == "B"]
    return "".join(nodes)


@st.composite
def collections(draw: st.DrawFn) -> bytes:
    games = []
    for _ in range(draw(st.integers(1, 3))):
        game = draw(ROOTS) + draw(move_nodes())
        if draw(st.integers(0, 5)) == 0:
            game += f"({draw(move_nodes())})({draw(move_nodes())})"
        games.append(game + ")")
    return "\n".join(games).encode()


@settings(max_examples=examples(500), deadline=None)
@given(data=collections(), chunk=st.integers(1, 200))
def test_runs_of_moves_give_the_findings_of_node_by_node_checking(data: bytes, chunk: int) -> None:
    def summary(report: CheckReport) -> tuple[object, ...]:
        error = report.parse_error
        where = None if error is None else (error.message, error.line, error.column)
        return where, report.games, report.findings, report.counts

    chunks = [data[i : i + chunk] for i in range(0, len(data), chunk)]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_GameChecker, "moves", lambda self, run, line, column: False)
        expected = summary(check_chunks(chunks))
    assert summary(check_chunks(chunks)) == expected
    assert summary(check_sgf(data)) == expected
