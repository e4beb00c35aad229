"""A digest of what the privacy filter does, not of how its source is written.

Maintain's rescrub (``maintain.rescrub``) reads every stored text again when the filter
changed. A digest of the source files changed with every comment and docstring edit: a
rescan of the whole store (and its backups) in each release. This one is taken over what
runs: each module-level value of the filter's modules (a detector's pattern, flags and
checks, a word list, a threshold), reduced to plain data, and each of their functions'
and methods' bytecode, names and constants, without their docstrings, line numbers or
file names. A changed pattern, list, constant or line of code changes it; a comment, a
docstring or code moved within the file does not. The bytecode is the interpreter's: a
new Python minor version reads the store once more.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import types
from collections.abc import Iterable
from typing import Any

from memctl.lazy_re import source_of

# The code object's fields that say what it does (``co_code``: its instructions; the
# names, local names and constants they use), from the ``inspect`` module's table.
CODE_FIELDS = ("co_argcount", "co_kwonlyargcount", "co_flags", "co_code", "co_names", "co_varnames")
# A class's attributes that say nothing of what it does (its docstring, its module's name,
# slots Python adds); a dataclass's own records are left out by their prefix.
CLASS_SKIPPED = ("__doc__", "__module__", "__dict__", "__weakref__")
# Plain values, kept as they are.
PLAIN = (type(None), bool, int, float, complex, str, bytes)
DIGEST_CHARS = 16


def behaviour_digest(modules: Iterable[types.ModuleType]) -> str:
    """A digest of what ``modules`` do (their values and their code, as above)."""
    chosen = list(modules)
    walk = _Walk({m.__name__ for m in chosen}, {str(m.__file__) for m in chosen})
    digest = hashlib.sha256()
    for module in chosen:
        kept = {k: v for k, v in vars(module).items() if not k.startswith("__")}
        digest.update(repr((module.__name__, walk.form(kept))).encode())
    return digest.hexdigest()[:DIGEST_CHARS]


@dataclasses.dataclass
class _Walk:
    """A value reduced to plain data with a repr of its own (no object's address, no
    set's order): the filter's own functions and classes by what they hold, anything
    from elsewhere by its name."""

    names: set[str]  # the filter's modules
    files: set[str]  # their files: a function's code is read when it was written there
    walking: set[int] = dataclasses.field(default_factory=set)  # the values being walked

    def form(self, value: Any) -> Any:
        if isinstance(value, PLAIN):
            return value
        if isinstance(value, tuple | list):
            return tuple(self.form(v) for v in value)
        if isinstance(value, set | frozenset):
            return ("set", sorted(repr(self.form(v)) for v in value))
        if isinstance(value, dict):
            return (
                "dict",
                sorted((repr(self.form(k)), repr(self.form(v))) for k, v in value.items()),
            )
        source = source_of(value)  # read uncompiled: a digest compiles no pattern
        if source is not None:
            return ("re", source)
        if isinstance(value, types.CodeType):
            return self._code(value, None)
        if id(value) in self.walking:  # a value holding itself: named, not walked again
            return ("again", _name(value))
        self.walking.add(id(value))
        try:
            return self._held(value)
        finally:
            self.walking.discard(id(value))

    def _held(self, value: Any) -> Any:
        """A function, class or object: what it holds."""
        if isinstance(value, staticmethod | classmethod):
            return self.form(value.__func__)
        if isinstance(value, functools.cached_property):
            return self.form(value.func)
        if isinstance(value, property):
            return ("property", self.form(value.fget), self.form(value.fset))
        if isinstance(value, functools.partial):
            return (
                "partial",
                self.form(value.func),
                self.form(value.args),
                self.form(value.keywords),
            )
        if isinstance(value, types.FunctionType):
            if value.__code__.co_filename not in self.files:
                return ("ref", _name(value))
            code = self._code(value.__code__, value.__doc__)
            return ("def", code, self.form(value.__defaults__), self.form(value.__kwdefaults__))
        if isinstance(value, type):
            if value.__module__ not in self.names:
                return ("ref", _name(value))
            held = {k: v for k, v in vars(value).items() if k not in CLASS_SKIPPED}
            held = {k: v for k, v in held.items() if not k.startswith("__dataclass")}
            return ("class", [_name(b) for b in value.__bases__], self.form(held))
        if dataclasses.is_dataclass(value):
            fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
            return ("object", _name(type(value)), self.form(fields))
        wrapped = getattr(value, "__wrapped__", None)  # functools.cache's and the like
        if wrapped is not None:
            return ("wrapped", self.form(wrapped))
        return ("ref", _name(type(value)))

    def _code(self, code: types.CodeType, doc: str | None) -> Any:
        """Its instructions, names and constants; the docstring a function's first
        constant holds is left out."""
        consts = list(code.co_consts)
        if doc is not None and consts and consts[0] == doc:
            consts = consts[1:]
        return ("code", *(getattr(code, f) for f in CODE_FIELDS), self.form(consts))


def _name(value: Any) -> str:
    return (
        f"{getattr(value, '__module__', '')}.{getattr(value, '__qualname__', type(value).__name__)}"
    )
