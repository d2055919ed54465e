"""Reading config files safely, and checking their values: the limits every config input passes.

Two halves, used by both the training side (run configs, YAML) and the inference side (judge
folders' ``judge_config.json``):

* :func:`load_yaml_file` / :func:`parse_yaml_value`: plain YAML (the safe tag set only) read with
  limits, so a small hostile file cannot take minutes and gigabytes: at most
  :data:`MAX_YAML_BYTES` bytes, at most :data:`MAX_YAML_NODES` nodes *after alias expansion* (a
  "billion laughs" file of 1 KB describes ~10^9 nodes through nested aliases), nesting at most
  :data:`MAX_YAML_DEPTH` deep, no recursive aliases and no duplicate keys. Errors are one line,
  ``file:line:column: what``, and never echo more than :data:`MAX_VALUE_CHARS` characters of a value.
* :func:`checked` / :func:`check_fields`: a dataclass field declares its allowed range or value set
  in its metadata (``lr: float = checked(1e-4, "(0, 1]")``) and ``__post_init__`` calls
  :func:`check_fields`, which also refuses every non-finite float (NaN or infinity is never a
  meaningful config value: "off" is spelled ``null`` or ``0``). :func:`build_dataclass` builds
  such dataclasses from a loaded mapping, naming the dotted key of any bad value.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import reprlib
import types
import typing
from pathlib import Path
from typing import Any

import yaml
from yaml.composer import ComposerError
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

#: Largest YAML file read, in bytes (1 MiB). Run configs are 1-3 KB; a megabyte is far beyond any
#: hand-written config and still parses in well under a second.
MAX_YAML_BYTES = 1 << 20
#: Most nodes a YAML document may hold once every alias is expanded (each scalar, list and mapping
#: counts 1, an alias counts the whole subtree it repeats). Run configs hold ~100; 100,000 leaves
#: room for long lists while an alias bomb is refused after composing a few hundred nodes.
MAX_YAML_NODES = 100_000
#: Deepest nesting of lists and mappings (configs nest 4 levels; the YAML composer recurses per level).
MAX_YAML_DEPTH = 64
#: Most characters of a value echoed in an error message (the rest is elided).
MAX_VALUE_CHARS = 200
#: Longest prompt text a config may hold, in characters (per field: prompt, system prompt, text
#: before the audio, assistant prefix). The longest prompt omnijudge ships is the InstructTTSEval
#: public template, 1,737 characters; 8,000 is 4.6 times that. A character is at most 4 tokens
#: (one per UTF-8 byte on a byte-level vocabulary, about one on the Qwen vocabulary), so every
#: prompt field stays within 32k tokens; a 4,000-word prompt (20,000+ characters) is refused.
MAX_PROMPT_CHARS = 8_000

_REPR = reprlib.Repr()
_REPR.maxstring = MAX_VALUE_CHARS
_REPR.maxother = MAX_VALUE_CHARS
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = 8
_REPR.maxlevel = 3


class ConfigInputError(ValueError):
    """A config file is too large, not plain YAML, or holds a value outside its declared range."""


class FieldError(ConfigInputError):
    """A field value outside its range or value set; ``key`` is the field's (dotted) name and
    ``problem`` what is wrong, so a caller can prefix the file, line and section."""

    def __init__(self, key: str, problem: str):
        super().__init__(f"{key}: {problem}")
        self.key, self.problem = key, problem


def short_repr(value: Any, limit: int = MAX_VALUE_CHARS) -> str:
    """``repr(value)`` cut to at most ``limit`` characters: bounded work on huge or shared nested
    values (an expanded alias bomb is never walked), and no error on huge integers."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 600:
        return f"<an integer of about {int(value.bit_length() * 0.30103) + 1:,} digits>"
    text = _REPR.repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def short_text(text: str, limit: int = MAX_VALUE_CHARS) -> str:
    """A message part of at most ``limit`` characters, on one line."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ---- YAML --------------------------------------------------------------------------------------
class _LimitError(ComposerError):
    """A document over one of the loader's limits (valid YAML, refused)."""


class LimitedSafeLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses documents over :data:`MAX_YAML_NODES` expanded nodes or
    :data:`MAX_YAML_DEPTH` levels, and recursive aliases. Each composed node records its expanded
    size (1 + its children's, an alias counting its target's), so the check costs one addition
    per node and an alias bomb stops at the first node whose expansion is over the limit."""

    max_nodes = MAX_YAML_NODES
    max_depth = MAX_YAML_DEPTH

    def __init__(self, stream):
        super().__init__(stream)
        self._sizes: dict[int, int] = {}
        self._depth = 0

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            target = self.anchors.get(event.anchor)
            if target is not None and id(target) not in self._sizes:
                raise _LimitError(None, None, f"alias *{short_text(event.anchor, 40)} is used inside the node it "
                                    "names (recursive YAML is not allowed)", event.start_mark)
            return super().compose_node(parent, index)
        self._depth += 1
        if self._depth > self.max_depth:
            raise _LimitError(None, None, f"nested more than {self.max_depth} levels deep", self.peek_event().start_mark)
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        if isinstance(node, SequenceNode):
            size = 1 + sum(self._sizes[id(child)] for child in node.value)
        elif isinstance(node, MappingNode):
            size = 1 + sum(self._sizes[id(k)] + self._sizes[id(v)] for k, v in node.value)
        else:
            size = 1
        if size > self.max_nodes:
            raise _LimitError(None, None, f"expands to more than {self.max_nodes:,} values once its aliases are "
                                "repeated (limit against alias bombs)", node.start_mark)
        self._sizes[id(node)] = size
        return node


def _yaml_error(where: str, e: yaml.YAMLError) -> ConfigInputError:
    """One line, ``where:line:column: problem``, with no snippet of the file (a line may be megabytes)."""
    mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
    at = f"{where}:{mark.line + 1}:{mark.column + 1}" if mark is not None else where
    problem = getattr(e, "problem", None) or getattr(e, "context", None) or str(e)
    tag = problem.split("tag '", 1)[1].split("'", 1)[0] if "constructor for the tag '" in problem else None
    if tag is not None:
        shown = "!!" + tag.removeprefix("tag:yaml.org,2002:") if tag.startswith("tag:yaml.org,2002:") else tag
        return ConfigInputError(f"{at}: tag {short_text(shown, 80)} is not allowed (plain YAML values only: "
                                "strings, numbers, booleans, null, lists and mappings)")
    if isinstance(e, _LimitError):
        return ConfigInputError(f"{at}: {short_text(problem)}")
    return ConfigInputError(f"{at}: not valid YAML: {short_text(problem)}")


def key_lines(node, prefix: str = "", out: dict[str, int] | None = None, where: str = "") -> dict[str, int]:
    """Dotted key -> 1-based line of every mapping key reachable through mappings from ``node``
    (for messages that name ``file:line``); a key given twice in one mapping is an error."""
    out = {} if out is None else out
    if isinstance(node, MappingNode):
        seen: set[str] = set()
        for k, v in node.value:
            if not isinstance(k, ScalarNode):
                continue
            if k.value in seen and k.value != "<<":
                raise ConfigInputError(f"{where}:{k.start_mark.line + 1}:{prefix}{short_text(k.value, 80)}: "
                                       "key given twice in one mapping")
            seen.add(k.value)
            out.setdefault(f"{prefix}{k.value}", k.start_mark.line + 1)
            key_lines(v, f"{prefix}{k.value}.", out, where)
    return out


def load_yaml_text(text: str, where: str) -> tuple[Any, dict[str, int]]:
    """(value, key lines) of one YAML document, read with :class:`LimitedSafeLoader`; ``where``
    names the source in messages. An empty document is ``None``."""
    loader = LimitedSafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, {}
        lines = key_lines(node, where=where)
        return loader.construct_document(node), lines
    except yaml.YAMLError as e:
        raise _yaml_error(where, e) from None
    except ConfigInputError:
        raise
    except (ValueError, TypeError) as e:  # e.g. an integer of more than 4300 digits, an unhashable key
        raise ConfigInputError(f"{where}: {short_text(e)}") from None
    finally:
        loader.dispose()


def load_yaml_file(path: str | Path) -> tuple[Any, dict[str, int]]:
    """(value, key lines) of a YAML file (see :func:`load_yaml_text`), refused over :data:`MAX_YAML_BYTES`."""
    path = Path(path)
    size = path.stat().st_size
    if size > MAX_YAML_BYTES:
        raise ConfigInputError(f"{path}: {size:,} bytes; a config file may hold at most {MAX_YAML_BYTES:,}")
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as e:
        raise ConfigInputError(f"{path}: not UTF-8 text (byte {e.start})") from None
    return load_yaml_text(text, str(path))


def parse_yaml_value(text: str, where: str = "--set") -> Any:
    """A command-line value (``--set key=VALUE``) as a YAML scalar or flow collection, with the
    same limits as a file (``where`` names it in messages)."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_YAML_BYTES:
        raise ConfigInputError(f"{where}: value longer than {MAX_YAML_BYTES:,} bytes")
    return load_yaml_text(text, where)[0]


# ---- field checks ------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Interval:
    """An allowed numeric range in interval notation: ``"(0, 1]"``, ``"[1, inf)"``; ``integer``
    values must also be whole numbers, ``multiple_of`` a multiple of it."""

    lo: float
    hi: float
    lo_open: bool
    hi_open: bool
    text: str
    multiple_of: int | None = None

    @classmethod
    def parse(cls, text: str, multiple_of: int | None = None) -> "Interval":
        lo, hi = (part.strip() for part in text.strip()[1:-1].split(","))
        return cls(float(lo), float(hi), text.strip()[0] == "(", text.strip()[-1] == ")", text, multiple_of)

    def contains(self, x: float) -> bool:
        above = x > self.lo if self.lo_open else x >= self.lo
        below = x < self.hi if self.hi_open else x <= self.hi
        return above and below and (self.multiple_of is None or x % self.multiple_of == 0)

    def describe(self) -> str:
        return f"in {self.text}" + (f" and a multiple of {self.multiple_of}" if self.multiple_of else "")


def checked(default: Any = dataclasses.MISSING, interval: str | None = None, *, choices: tuple | None = None,
            multiple_of: int | None = None, max_chars: int | None = None, default_factory: Any = dataclasses.MISSING):
    """A dataclass field whose value :func:`check_fields` checks: a number ``interval``
    (``"(0, 1]"``), a value set ``choices``, or a string of at most ``max_chars`` characters.
    ``None`` always passes (for optional fields: ``None`` means "not set")."""
    meta = {}
    if interval is not None:
        meta["range"] = Interval.parse(interval, multiple_of)
    if choices is not None:
        meta["choices"] = tuple(choices)
    if max_chars is not None:
        meta["max_chars"] = max_chars
    return dataclasses.field(default=default, default_factory=default_factory, metadata=meta)


def check_number(value: Any, interval: Interval | str, key: str) -> None:
    """Refuse ``value`` unless it is a real number (not a bool), finite, and within ``interval``."""
    interval = Interval.parse(interval) if isinstance(interval, str) else interval
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise FieldError(key, f"expected a number {interval.describe()}, got {short_repr(value)}")
    if not math.isfinite(value):
        raise FieldError(key, f"must be a finite number {interval.describe()}, got {value}")
    if not interval.contains(value):
        raise FieldError(key, f"must be {interval.describe()}, got {short_repr(value)}")


def check_choice(value: Any, choices: tuple, key: str) -> None:
    """Refuse ``value`` unless it is one of ``choices`` (the message lists them)."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)) or value not in choices:
        raise FieldError(key, f"{short_repr(value)} is not one of {', '.join(map(str, choices))}")


def check_text(value: Any, max_chars: int, key: str) -> None:
    """Refuse ``value`` unless it is a string of at most ``max_chars`` characters."""
    if not isinstance(value, str):
        raise FieldError(key, f"expected text, got {short_repr(value)}")
    if len(value) > max_chars:
        raise FieldError(key, f"{len(value):,} characters; the limit is {max_chars:,}")


def check_finite(value: Any, key: str, budget: int = MAX_YAML_NODES) -> None:
    """Refuse NaN or infinity anywhere in ``value`` (nested lists, tuples and dicts), visiting at
    most ``budget`` items (a shared, alias-built value is refused rather than walked for minutes)."""
    stack, seen = [(key, value)], 0
    while stack:
        where, v = stack.pop()
        seen += 1
        if seen > budget:
            raise FieldError(key, f"holds more than {budget:,} values")
        if isinstance(v, float) and not math.isfinite(v):
            raise FieldError(where, f"must be a finite number, got {v}")
        if isinstance(v, dict):
            stack.extend((f"{where}.{k}", x) for k, x in v.items())
        elif isinstance(v, (list, tuple)):
            stack.extend((f"{where}[{i}]", x) for i, x in enumerate(v))


def check_fields(obj) -> None:
    """Check every field of dataclass ``obj`` against its :func:`checked` metadata, every ``int``
    field for a whole number and every float (also inside lists and dicts) for finiteness;
    raises :class:`FieldError` naming the field."""
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if value is None or dataclasses.is_dataclass(value):
            continue
        meta = f.metadata
        if f.type in ("int", int) and (isinstance(value, bool) or not isinstance(value, numbers.Integral)):
            raise FieldError(f.name, f"expected a whole number, got {short_repr(value)}")
        if "range" in meta:
            check_number(value, meta["range"], f.name)
        if "choices" in meta:
            check_choice(value, meta["choices"], f.name)
        if "max_chars" in meta:
            check_text(value, meta["max_chars"], f.name)
        if isinstance(value, (float, list, tuple, dict)):
            check_finite(value, f.name)


def describe_check(f: dataclasses.Field) -> str:
    """The declared range or value set of a field, for ``--help-config`` (empty when none)."""
    meta = f.metadata
    if "range" in meta:
        return meta["range"].describe()
    if "choices" in meta:
        return "one of " + " | ".join(map(str, meta["choices"]))
    if "max_chars" in meta:
        return f"at most {meta['max_chars']:,} characters"
    return ""


# ---- typed dataclasses from mappings -----------------------------------------------------------
def build_dataclass(cls, data: Any, prefix: str = "", defaults: Any = None, exclude: tuple[str, ...] = ()):
    """``cls`` from a mapping whose keys sit under ``prefix`` (``"optim."``): unknown keys, values
    of the wrong type and values outside a field's declared range raise :class:`FieldError` with
    the full dotted key. Nested dataclass sections start from the parent's default for them (so a
    section's default factory, e.g. a head's output count, survives a partial file); ``exclude``
    names fields that are not keys of the mapping."""
    if not isinstance(data, dict):
        raise FieldError(prefix.rstrip("."), f"expected a mapping, got {short_repr(data)}")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.name not in exclude}
    unknown = sorted(map(str, set(data) - set(fields)))
    if unknown:
        raise FieldError(f"{prefix}{unknown[0]}", f"unknown key(s) {short_repr(unknown)}; allowed: {sorted(fields)}")
    kwargs = {}
    for key, value in data.items():
        hint, f = hints[key], fields[key]
        if dataclasses.is_dataclass(hint):
            base = getattr(defaults, key) if defaults is not None else (
                f.default_factory() if f.default_factory is not dataclasses.MISSING else None)
            kwargs[key] = build_dataclass(hint, {} if value is None else value, f"{prefix}{key}.", base, exclude)
            continue
        interval = f.metadata.get("range")
        if interval is not None and isinstance(value, float) and not math.isfinite(value):
            raise FieldError(f"{prefix}{key}", f"must be a finite number {interval.describe()}, got {value}")
        kwargs[key] = coerce_value(value, hint, f"{prefix}{key}")
    if defaults is not None:
        kwargs = {**{k: getattr(defaults, k) for k in fields if k not in kwargs}, **kwargs}
    try:
        return cls(**kwargs)
    except FieldError as e:  # a field outside its declared range or value set
        raise FieldError(f"{prefix}{e.key}", e.problem) from None
    except (ValueError, TypeError) as e:  # a section's own validation (corpus configs, head shape)
        raise FieldError(prefix.rstrip("."), short_text(e)) from None


def coerce_value(value: Any, hint: Any, key: str) -> Any:
    """``value`` checked against its annotation ``hint`` (YAML gives ints for floats: accepted;
    lists become tuples where a tuple is declared); NaN and infinity are refused anywhere in it."""
    check_finite(value, key)
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        errors = []
        for arg in args:
            if arg is not type(None):
                try:
                    return coerce_value(value, arg, key)
                except FieldError as e:
                    errors.append(e)
        raise errors[0] if errors else FieldError(key, f"bad value {short_repr(value)}")
    if origin is list or hint is list:
        if not isinstance(value, list):
            raise FieldError(key, f"expected a list, got {short_repr(value)}")
        return [coerce_value(v, args[0], key) for v in value] if args else value
    if origin is tuple or hint is tuple:
        if not isinstance(value, (list, tuple)):
            raise FieldError(key, f"expected a list, got {short_repr(value)}")
        return tuple(value)
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if hint in (int, float, str, bool) and not (isinstance(value, hint) and not (hint is int and isinstance(value, bool))):
        raise FieldError(key, f"expected {hint.__name__}, got {short_repr(value)}")
    return value
