"""Text from bytes: byte order marks, lines as Python's text mode splits them, repairs counted per line."""

from sumpipe.io.text import text_lines


def test_text_lines_end_at_lf_crlf_or_cr_only() -> None:
    data = "a\u2028still a\x0cand a\nb\r\nc\rd\n".encode()
    assert text_lines(data) == [("a\u2028still a\x0cand a", False), ("b", False), ("c", False), ("d", False)]
    assert text_lines(b"x\n\n") == [("x", False), ("", False)] and text_lines(b"") == []


def test_text_lines_read_byte_order_marks_and_count_repairs_per_line() -> None:
    assert text_lines("\ufeffcaf\u00e9\nt\u00eate\n".encode("utf-8")) == [("caf\u00e9", False), ("t\u00eate", False)]
    assert text_lines("caf\u00e9\r\nt\u00eate".encode("utf-16")) == [("caf\u00e9", False), ("t\u00eate", False)]
    assert text_lines("one\ntwo".encode("utf-32")) == [("one", False), ("two", False)]
    # a real U+FFFD is text, not a repair; the Latin-1 byte on line 2 is one
    assert text_lines("ok \ufffd\n".encode() + b"caf\xe9\n") == [("ok \ufffd", False), ("caf\ufffd", True)]
