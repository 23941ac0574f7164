"""Read a pickle of protocol 3, 4 or 5 as the protocol-2 opcodes that torch's weights-only
unpickler reads.

``torch.save(..., pickle_protocol=4)`` was common in 2020-22 code (large checkpoints need
protocol 4's 8-byte lengths), and torch's weights-only unpickler reads protocol 2 only: it
stops at the first FRAME with "Unsupported operand 149". The newer protocols add framing,
shorter encodings and a memo without indices; each of those has an exact protocol-2
equivalent, so the pickle is translated opcode by opcode, as torch reads it, and torch's
unpickler decides every opcode as it would in a protocol-2 file:

- FRAME is dropped (it only groups the opcodes that follow);
- SHORT_BINUNICODE and BINUNICODE8 become BINUNICODE;
- SHORT_BINBYTES, BINBYTES and BINBYTES8 become ``_codecs.encode(text, "latin1")``, and
  protocol 5's in-band BYTEARRAY8 ``bytearray(text, "latin1")``, as protocol 2 writes them;
- MEMOIZE becomes BINPUT with the index the memo's length gives;
- STACK_GLOBAL becomes GLOBAL, with the module and name strings that the pickle pushed
  just before it. Strings are held back until the next opcode shows whether they name a
  global; a string the pickle memoises is remembered here, and a later BINGET of it pushes
  the string again (torch's memo never sees it: strings have no identity worth keeping).

Nothing else changes. Every other opcode goes through byte for byte, so an opcode torch's
unpickler refuses (ADDITEMS, FROZENSET, NEWOBJ_EX, protocol 5's out-of-band buffers, and
any protocol-2 opcode it does not read) is still refused by it, at the same point. The
translation reads the source exactly up to the pickle's STOP, as the unpickler itself
does: torch's legacy format keeps raw storage bytes after the pickle.
"""

from __future__ import annotations

import pickle
import struct
from typing import Callable

MAX_STRING = 2**32 - 1  # BINUNICODE's 4-byte length; torch's own limit is sys.maxsize

# The opcodes translated here (byte values).
_FRAME, _MEMOIZE, _STACK_GLOBAL = 0x95, 0x94, 0x93
_SHORT_BINUNICODE, _BINUNICODE8, _BINUNICODE = 0x8C, 0x8D, ord("X")
_SHORT_BINBYTES, _BINBYTES, _BINBYTES8 = ord("C"), ord("B"), 0x8E
_BINPUT, _LONG_BINPUT, _BINGET, _LONG_BINGET = ord("q"), ord("r"), ord("h"), ord("j")
_BYTEARRAY8 = 0x96
_STOP, _GLOBAL, _SHORT_BINSTRING, _LONG1 = ord("."), ord("c"), ord("U"), 0x8A

_BYTES_LENGTH = {_SHORT_BINBYTES: 1, _BINBYTES: 4, _BINBYTES8: 8, _BYTEARRAY8: 8}  # bytes of the size

# Arguments of fixed size of the opcodes passed through unchanged. Any other opcode is
# passed through alone: it has no argument, or torch's unpickler refuses it on reading it.
_FIXED_ARGUMENT = {
    ord("J"): 4, ord("K"): 1, ord("M"): 2, ord("G"): 8,  # BININT, BININT1, BININT2, BINFLOAT
    0x80: 1,  # PROTO (a second one, inside the pickle)
}


def _refuse(text: str) -> pickle.UnpicklingError:
    return pickle.UnpicklingError("compatfix's data-only loader: reading pickle protocol 3+ as protocol 2: " + text)


class Protocol2Reader:
    """``read``/``readline`` over a protocol 3+ pickle whose PROTO opcode was already read,
    giving the same pickle in protocol-2 opcodes."""

    def __init__(self, read: Callable[[int], bytes], readline: Callable[[], bytes]) -> None:
        self._source_read = read
        self._source_readline = readline
        self._out = bytearray()
        self._at = 0
        self._pending: list[bytes] = []  # utf-8 bytes of strings pushed but not yet written
        self._memo_strings: dict[int, bytes] = {}
        self._memo_size = 0  # the unpickler's len(memo), which MEMOIZE uses as its index
        self._memo_keys: set[int] = set()
        self._stopped = False

    # -- what the unpickler calls

    def read(self, size: int = -1) -> bytes:
        while len(self._out) - self._at < size and not self._stopped:
            self._translate_one()
        end = len(self._out) if size < 0 else self._at + size
        chunk = bytes(self._out[self._at:end])
        self._at += len(chunk)
        if self._at > 1 << 16:  # keep the buffer small: drop what was read
            del self._out[:self._at]
            self._at = 0
        return chunk

    def readline(self) -> bytes:
        while self._out.find(b"\n", self._at) < 0 and not self._stopped:
            self._translate_one()
        end = self._out.find(b"\n", self._at)
        return self.read(len(self._out) - self._at if end < 0 else end + 1 - self._at)

    # -- the translation

    def _take(self, size: int) -> bytes:
        data = self._source_read(size)
        if len(data) != size:
            raise _refuse("the pickle ends inside an opcode")
        return data

    def _length(self, size: int) -> int:
        return int.from_bytes(self._take(size), "little")

    def _memoised(self, index: int) -> None:
        if index not in self._memo_keys:
            self._memo_keys.add(index)
            self._memo_size += 1

    def _flush(self) -> None:
        for data in self._pending:
            self._out += b"X" + struct.pack("<I", len(data)) + data
        self._pending.clear()

    def _put(self, index: int) -> None:
        """A memo store of the stack's top, at ``index``."""
        self._memoised(index)
        if self._pending:
            self._memo_strings[index] = self._pending[-1]
            return
        self._memo_strings.pop(index, None)
        self._out += (b"q" + bytes([index])) if index < 256 else (b"r" + struct.pack("<I", index))

    def _translate_one(self) -> None:
        code = self._take(1)[0]
        if code == _FRAME:
            self._take(8)
        elif code in (_SHORT_BINUNICODE, _BINUNICODE, _BINUNICODE8):
            size = self._length({_SHORT_BINUNICODE: 1, _BINUNICODE: 4, _BINUNICODE8: 8}[code])
            if size > MAX_STRING:
                raise _refuse("a string of %d bytes" % size)
            self._pending.append(self._take(size))
        elif code == _MEMOIZE:
            self._put(self._memo_size)
        elif code in (_BINPUT, _LONG_BINPUT):
            self._put(self._length(1 if code == _BINPUT else 4))
        elif code in (_BINGET, _LONG_BINGET):
            index = self._length(1 if code == _BINGET else 4)
            if index in self._memo_strings:
                self._pending.append(self._memo_strings[index])
            else:
                self._flush()
                self._out += (b"h" + bytes([index])) if code == _BINGET else (b"j" + struct.pack("<I", index))
        elif code == _STACK_GLOBAL:
            if len(self._pending) < 2:
                raise _refuse("STACK_GLOBAL without a module and a name string before it")
            name, module = self._pending.pop(), self._pending.pop()
            if b"\n" in module or b"\n" in name:
                raise _refuse("a global's name with a line break")
            self._flush()
            self._out += b"c" + module + b"\n" + name + b"\n"
        elif code in (_SHORT_BINBYTES, _BINBYTES, _BINBYTES8, _BYTEARRAY8):
            size = self._length(_BYTES_LENGTH[code])
            if size > MAX_STRING // 2:  # latin-1 text doubles in utf-8 at worst
                raise _refuse("bytes of %d bytes" % size)
            text = self._take(size).decode("latin-1").encode("utf-8", "surrogatepass")
            self._flush()
            # As protocol 2 writes them: _codecs.encode(text, "latin1"), bytearray(text, "latin-1").
            call = b"c_codecs\nencode\n" if code != _BYTEARRAY8 else b"cbuiltins\nbytearray\n"
            self._out += call + b"(X" + struct.pack("<I", len(text)) + text + b"X\x06\x00\x00\x00latin1tR"
        else:
            self._flush()
            self._out.append(code)
            if code == _STOP:
                self._stopped = True
            elif code == _GLOBAL:
                self._out += self._source_readline() + self._source_readline()
            elif code in (_SHORT_BINSTRING, _LONG1):
                size = self._take(1)
                self._out += size + self._take(size[0])
            elif code in _FIXED_ARGUMENT:
                self._out += self._take(_FIXED_ARGUMENT[code])
            # else an opcode without an argument, or one torch refuses on reading it
