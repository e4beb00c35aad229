"""Reading a transcript: a byte stream (file or stdin) read a line or a chunk at a time.

Nothing here holds a whole input in memory: the first 64 KiB are kept for
sniffing the format, and the rest is read as it is consumed. JSON documents
(an OpenCode export, ``{"messages": [...]}``) are decoded one array element at
a time by :func:`json_members`.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Callable, Iterator
from typing import Any, Protocol

from memctl.config.safe_load import TOO_DEEP
from memctl.errors import InputError

SNIFF_BYTES = 1 << 16
CHUNK_CHARS = 1 << 20
# One JSON value (a message) may be at most this big; beyond it the input is refused
# rather than read into memory whole.
MAX_VALUE_CHARS = 64 << 20
_DECODER = json.JSONDecoder()


class ByteStream(Protocol):
    """What Input reads: a binary file, or a wrapper of one."""

    def read(self, size: int = -1, /) -> bytes: ...
    def readline(self, size: int = -1, /) -> bytes: ...
    def __iter__(self) -> Iterator[bytes]: ...
    def close(self) -> None: ...


class Input:
    """A transcript's (or an imported file's) bytes: the sniffed head, then the rest."""

    def __init__(
        self,
        stream: ByteStream,
        name: str,
        what: str = "a transcript",
        written_at: str | None = None,
    ) -> None:
        self.name = name
        # when the file was last written: the time of a message the transcript leaves
        # undated (a Cursor transcript keeps none), rather than the time it is read
        self.written_at = written_at
        self._stream = stream
        self.head = stream.read(SNIFF_BYTES)
        if self.head.startswith(b"\xef\xbb\xbf"):
            self.head = self.head[3:]
        codec = wide_codec(self.head)
        if codec is not None:  # read as UTF-8 from here on
            self._stream = Transcoded(stream, codec, self.head)
            self.head = self._stream.read(SNIFF_BYTES)
        if _binary(self.head):
            raise InputError(f"{name} holds binary data, not {what}")
        if not self.head.replace(b"\x00", b"").strip():
            raise InputError(f"{name} is empty")
        self.nul_bytes = 0  # NUL bytes met in the text read so far, and left out of it

    def close(self) -> None:
        self._stream.close()

    def __enter__(self) -> Input:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def head_text(self) -> str:
        return self.head.replace(b"\x00", b"").decode("utf-8", errors="replace")

    def lines(self) -> Iterator[str]:
        """Decoded lines, the head's first; a line longer than the head is still whole."""
        pending = b""
        for line in self.head.splitlines(keepends=True):
            pending = line
            if line.endswith(b"\n"):
                yield self._decode(line)
                pending = b""
        if pending:
            yield self._decode(pending + self._stream.readline())
        for line in self._stream:
            yield self._decode(line)

    def chunks(self, size: int = CHUNK_CHARS) -> Iterator[str]:
        """Decoded text in pieces of about ``size`` bytes (a MiB), the head first (split
        only between UTF-8 characters)."""
        data = self.head
        while True:
            more = self._stream.read(size)
            data += more
            if not more:
                if data:
                    yield self._decode(data)
                return
            cut = _char_boundary(data)
            yield self._decode(data[:cut])
            data = data[cut:]

    def _decode(self, raw: bytes) -> str:
        """Text of ``raw``, NUL bytes left out and counted (what a crash leaves at the end of
        an appended file, or a stray byte in a line: not a reason to refuse the rest)."""
        nuls = raw.count(b"\x00")
        if nuls:
            self.nul_bytes += nuls
            raw = raw.replace(b"\x00", b"")
        return raw.decode("utf-8", errors="replace")


def wide_codec(head: bytes) -> str | None:
    """The codec of text that starts with a UTF-16 or UTF-32 byte order mark (what
    PowerShell's ``>`` and Windows tools write), None for any other: its NUL bytes are no
    sign of binary data."""
    if head.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        return "utf-32"
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    return None


class Transcoded:
    """A byte stream of UTF-16 or UTF-32 text read as UTF-8 (its byte order mark left
    out), a chunk at a time."""

    def __init__(self, raw: ByteStream, codec: str, head: bytes = b"") -> None:
        self._raw = raw
        self._decoder = codecs.getincrementaldecoder(codec)(errors="replace")
        self._buffer = self._decoder.decode(head).encode("utf-8")
        self._done = False

    def _fill(self, enough: Callable[[], bool]) -> None:
        while not self._done and not enough():
            raw = self._raw.read(CHUNK_CHARS)
            self._done = not raw
            self._buffer += self._decoder.decode(raw, final=self._done).encode("utf-8")

    def read(self, size: int = -1, /) -> bytes:
        self._fill(lambda: 0 <= size <= len(self._buffer))
        cut = len(self._buffer) if size < 0 else size
        out, self._buffer = self._buffer[:cut], self._buffer[cut:]
        return out

    def readline(self, size: int = -1, /) -> bytes:
        self._fill(lambda: b"\n" in self._buffer or 0 <= size <= len(self._buffer))
        end = self._buffer.find(b"\n") + 1 or len(self._buffer)
        if size >= 0:
            end = min(end, size)
        out, self._buffer = self._buffer[:end], self._buffer[end:]
        return out

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.readline, b"")

    def close(self) -> None:
        self._raw.close()


def _binary(head: bytes) -> bool:
    """Binary data, not text: NUL bytes in the first line, or NUL bytes among bytes that are
    not UTF-8. Text with NUL bytes further on (a crashed append) is read, NULs left out."""
    if b"\x00" not in head:
        return False
    first = head.split(b"\n", 1)[0]
    if b"\x00" in first:
        return True
    text = head.replace(b"\x00", b"")
    try:
        text[: _char_boundary(text)].decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def _char_boundary(data: bytes) -> int:
    """The largest index <= len(data) that does not split a UTF-8 sequence."""
    end = len(data)
    for back in range(1, min(4, end) + 1):
        byte = data[end - back]
        if byte < 0x80:
            return end
        if byte >= 0xC0:  # a lead byte: is its sequence complete?
            size = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return end if back >= size else end - back
    return end


class _Reader:
    """A growing window over chunked JSON text, decoding one value at a time."""

    def __init__(self, chunks: Iterator[str]) -> None:
        self._chunks = chunks
        self.buf = ""
        self.pos = 0
        self.eof = False

    def more(self) -> bool:
        chunk = next(self._chunks, None)
        if chunk is None:
            self.eof = True
            return False
        self.buf = self.buf[self.pos :] + chunk
        self.pos = 0
        return True

    def peek(self) -> str:
        """The next non-blank character ('' at the end), not consumed."""
        while True:
            while self.pos < len(self.buf) and self.buf[self.pos] in " \t\r\n":
                self.pos += 1
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self.more():
                return ""

    def expect(self, char: str) -> None:
        if self.peek() != char:
            raise ValueError(f"expected {char!r} at character {self.pos}")
        self.pos += 1

    def value(self) -> Any:
        self.peek()
        while True:
            try:
                value, end = _DECODER.raw_decode(self.buf, self.pos)
            except RecursionError:
                raise ValueError(TOO_DEEP) from None
            except json.JSONDecodeError:
                if len(self.buf) - self.pos > MAX_VALUE_CHARS:
                    raise ValueError("a JSON value is larger than 64 MiB") from None
                if self.more():
                    continue
                raise
            # a number at the window's edge may go on in the next chunk
            if end == len(self.buf) and not self.eof and self.more():
                continue
            self.pos = end
            return value

    def items(self, close: str) -> Iterator[None]:
        """Step through the comma-separated members of an array or object."""
        first = True
        while True:
            if self.peek() == close:
                self.pos += 1
                return
            if not first:
                self.expect(",")
            first = False
            yield None


def json_members(chunks: Iterator[str], streamed: str) -> Iterator[tuple[str | None, Any]]:
    """(key, value) of each member of a top-level JSON object, in order.

    The member named ``streamed``, if it is an array, is yielded element by
    element as (``streamed``, element). A top-level array yields (None,
    element) for each element. Raises ValueError (json.JSONDecodeError is one)
    at the first malformed place.
    """
    reader = _Reader(chunks)
    opening = reader.peek()
    if opening not in ("{", "["):
        raise ValueError("not a JSON object or array")
    reader.pos += 1
    if opening == "[":
        for _ in reader.items("]"):
            yield None, reader.value()
    else:
        for _ in reader.items("}"):
            key = reader.value()
            if not isinstance(key, str):
                raise ValueError("object key is not a string")
            reader.expect(":")
            if key == streamed and reader.peek() == "[":
                reader.pos += 1
                for _ in reader.items("]"):
                    yield key, reader.value()
            else:
                yield key, reader.value()
    if reader.peek():
        raise ValueError(f"extra data after the JSON document at character {reader.pos}")
