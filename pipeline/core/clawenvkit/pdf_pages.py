"""PDF files as lists of page texts: ``pdf_bytes`` writes a PDF whose pages pypdf extracts to
exactly the given texts (ClawEnvKit's documents service reads PDFs with pypdf), ``read_pages``
reads a PDF's page texts back with pypdf (the ``pdf`` extra).

The writer needs no library: each page is one text object in Helvetica (WinAnsiEncoding), a
line break between two non-empty lines is a move to the next line and any further break is kept
in the string, so pypdf's extraction gives back the text character for character (tested by a
round trip through pypdf). Text it cannot write exactly (characters outside Windows-1252's
printable ones, or control characters other than tab, line feed and carriage return) is refused.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

from pipeline.core.distribution import install_extra

PDF_EXTRA = install_extra("pdf")
"""What installs pypdf, the reader ``read_pages`` needs."""

_ENCODING = "cp1252"
_LINE_BREAK = re.compile(r"(?<=[^\n])\n(?=[^\n])")
_UNWRITABLE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


class PdfError(ValueError):
    """A PDF that cannot be written or read as page texts; the message says why in one line."""


def _escaped(text: str) -> str:
    return (text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
            .replace("\r", "\\r").replace("\n", "\\n"))


def _content(text: str) -> bytes:
    if _UNWRITABLE.search(text):
        raise PdfError("page text holds a control character a PDF text cannot carry exactly")
    ops = ["BT /F1 12 Tf 14 TL 72 756 Td"]
    ops += [("T* " if i else "") + f"({_escaped(line)}) Tj" for i, line in enumerate(_LINE_BREAK.split(text))]
    ops.append("ET")
    try:
        return "\n".join(ops).encode(_ENCODING)
    except UnicodeEncodeError as exc:
        raise PdfError(f"page text holds {exc.object[exc.start]!r}, outside the Windows-1252 characters the "
                       "written PDF can carry exactly") from None


def pdf_bytes(pages: list[str]) -> bytes:
    """A PDF with one US Letter page per text, whose pages pypdf extracts to exactly ``pages``.
    ``PdfError`` for text it cannot write exactly (see the module docstring)."""
    objects: list[bytes] = [b"<< /Type /Catalog /Pages 2 0 R >>", b"",
                            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"]
    kids = []
    for text in pages:
        stream = _content(text)
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
        objects.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
                       b"/Resources << /Font << /F1 3 0 R >> >> >>" % len(objects))
        kids.append(len(objects))
    objects[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(b"%d 0 R" % k for k in kids), len(kids))
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def read_pages(path: Path, max_bytes: int, max_pages: int, max_content_bytes: int, deadline_s: float) -> list[str]:
    """The text of each page of the PDF at ``path`` as pypdf extracts it (``""`` for a page
    without text). ``PdfError`` when pypdf is not installed, the file is larger than
    ``max_bytes``, has more than ``max_pages`` pages, its pages' content streams (decoded, a
    stream shared by several pages counted for each) hold more than ``max_content_bytes`` together
    (the text operators pypdf would walk: its time grows with them), reading takes more than
    ``deadline_s`` seconds (checked between pages), or pypdf cannot read it."""
    try:
        from pypdf import PdfReader
        from pypdf.errors import PyPdfError
    except ImportError:
        raise PdfError(f"reading PDF files needs pypdf: {PDF_EXTRA}") from None
    size = path.stat().st_size
    if size > max_bytes:
        raise PdfError(f"{path.name}: {size} bytes, more than the {max_bytes} a PDF may have")
    ends = time.monotonic() + deadline_s
    try:
        reader = PdfReader(path)
        if len(reader.pages) > max_pages:
            raise PdfError(f"{path.name}: {len(reader.pages)} pages, more than the {max_pages} a PDF may have")
        content = 0
        for page in reader.pages:
            stream = page.get_contents()
            content += len(stream.get_data()) if stream is not None else 0
            if content > max_content_bytes:
                raise PdfError(f"{path.name}: its pages hold more than {max_content_bytes:,} bytes of content "
                               "streams, more than a PDF may have; not read")
        texts = []
        for page in reader.pages:
            if time.monotonic() > ends:
                raise PdfError(f"{path.name}: reading its text took more than {deadline_s:g} s; not read")
            texts.append(page.extract_text() or "")
        return texts
    except (PyPdfError, ValueError, KeyError, TypeError, RecursionError, AttributeError) as exc:
        if isinstance(exc, PdfError):
            raise
        raise PdfError(f"{path.name}: not a PDF pypdf can read ({type(exc).__name__}: {str(exc)[:200]})") from None
