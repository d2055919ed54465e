"""Read a CTranslate2 ``model.bin`` with numpy alone (no ``ctranslate2`` import).

The format (CTranslate2 binary versions 3 to 6, little endian): ``uint32`` binary version, a
string spec name, ``uint32`` spec revision, ``uint32`` variable count, then per variable: a string
name, ``uint8`` rank, ``rank`` x ``uint32`` dims, ``uint8`` dtype id (float32, int8, int16, int32,
float16, bfloat16), ``uint32`` byte count and the raw bytes; then ``uint32`` alias count and per
alias two strings (alias name, name of the variable it shares). A string is a ``uint16`` length
(counting a trailing NUL), the UTF-8 bytes and the NUL.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

import numpy as np

#: CTranslate2 ``DataType`` ids -> numpy dtypes (bfloat16 has no numpy dtype: kept as raw uint16).
_DTYPES = {0: np.float32, 1: np.int8, 2: np.int16, 3: np.int32, 4: np.float16, 5: np.uint16}
_BFLOAT16 = 5
_VERSIONS = (3, 4, 5, 6)


class Ct2FormatError(ValueError):
    """A ``model.bin`` that is not a CTranslate2 model of a supported binary version."""


@dataclass
class Ct2Model:
    """One parsed ``model.bin``: spec name and revision, the arrays by name, and the aliases
    (alias name -> the variable name whose array it shares)."""

    spec: str
    revision: int
    binary_version: int
    variables: dict[str, np.ndarray] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)

    def get(self, name: str) -> np.ndarray:
        """The array of ``name``, following an alias."""
        return self.variables[self.aliases.get(name, name)]


class _Cursor:
    """Little-endian reads from a bytes buffer, naming ``source`` when the data ends early."""

    def __init__(self, data: bytes | memoryview, source: str):
        self.data, self.pos, self.source = data, 0, source

    def unpack(self, fmt: str):
        size = struct.calcsize("<" + fmt)
        if self.pos + size > len(self.data):
            raise Ct2FormatError(f"{self.source}: truncated at byte {self.pos}")
        value = struct.unpack_from("<" + fmt, self.data, self.pos)[0]
        self.pos += size
        return value

    def string(self) -> str:
        n = self.unpack("H")
        raw = bytes(self.data[self.pos:self.pos + n])
        if len(raw) != n or n == 0 or raw[-1] != 0:
            raise Ct2FormatError(f"{self.source}: bad string at byte {self.pos}")
        self.pos += n
        return raw[:-1].decode("utf-8")

    def take(self, n: int) -> memoryview:
        if self.pos + n > len(self.data):
            raise Ct2FormatError(f"{self.source}: truncated array at byte {self.pos}")
        view = memoryview(self.data)[self.pos:self.pos + n]
        self.pos += n
        return view


def _variable(cur: _Cursor) -> tuple[str, np.ndarray]:
    name = cur.string()
    shape = tuple(cur.unpack("I") for _ in range(cur.unpack("B")))
    type_id = cur.unpack("B")
    if type_id not in _DTYPES:
        raise Ct2FormatError(f"{cur.source}: variable {name} has unknown dtype id {type_id}")
    nbytes = cur.unpack("I")
    dtype = np.dtype(_DTYPES[type_id])
    if nbytes != int(np.prod(shape, dtype=np.int64)) * dtype.itemsize:
        raise Ct2FormatError(f"{cur.source}: variable {name} has {nbytes} bytes for shape {shape}")
    array = np.frombuffer(cur.take(nbytes), dtype=dtype).reshape(shape)
    if type_id == _BFLOAT16:  # widen bfloat16 bits to float32 exactly
        array = (array.astype(np.uint32) << 16).view(np.float32)
    return name, array


def parse_ct2(data: bytes | memoryview, source: str = "model.bin") -> Ct2Model:
    """Parse the bytes of a ``model.bin`` (arrays are read-only views into ``data``)."""
    cur = _Cursor(data, source)
    version = cur.unpack("I")
    if version not in _VERSIONS:
        raise Ct2FormatError(f"{source}: binary version {version} (supported: {_VERSIONS})")
    model = Ct2Model(spec=cur.string(), revision=cur.unpack("I"), binary_version=version)
    for _ in range(cur.unpack("I")):
        name, array = _variable(cur)
        model.variables[name] = array
    for _ in range(cur.unpack("I")):
        alias = cur.string()
        model.aliases[alias] = cur.string()
    if cur.pos != len(data):
        raise Ct2FormatError(f"{source}: {len(data) - cur.pos} trailing bytes after the aliases")
    missing = sorted(v for v in model.aliases.values() if v not in model.variables)
    if missing:
        raise Ct2FormatError(f"{source}: aliases point at missing variables {missing[:3]}")
    return model
