"""`import:<module>:<attribute>`: a method from the user's own module, refused before any work when unusable.

Options after `?` (`import:my_pkg.methods:MyCompressor?top_k=5&model=small`) are keyword arguments of the
class's constructor: a value that reads as an int, a float, `true` or `false` is passed as one, any other as
text. They key the cache as the spec does: an instance with an explicit `revision` gets the options appended
to it (`v1?model=small&top_k=5`), any other has them in its state (`gacc_options`), from which its revision
is derived.

A failure inside the user's module (it raises or calls `sys.exit` at import, has a syntax error, names a
value that is not callable, or is a class that cannot be built without arguments) is bad input, not a gacc
bug: it is a ValueError (exit 2) naming the spec and the user's file and line.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys
import traceback
from types import ModuleType
from typing import Any
from urllib.parse import parse_qsl, urlencode


def load(spec: str) -> Any:
    """The method `import:<spec>` names: a class (built without arguments), a function or an instance.

    The working directory is searched too (after the installed packages), as `python -m` does, so a
    module beside the user is found the same way under the `gacc` script and `accelerate launch`.
    """
    module, sep, rest = spec.partition(":")
    attr, question_mark, query = rest.partition("?")
    shown = f"import:{spec}"
    if not sep or not module or not attr:
        raise ValueError(f"expected import:<module>:<attribute>[?option=value&...], got {shown}")
    options = _options(query, shown) if question_mark else {}
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.append(os.getcwd())
    try:
        obj = getattr(_import(module, shown), attr)
    except AttributeError as exc:
        raise ValueError(f"cannot import method {shown!r}: {exc}") from exc
    if options and not isinstance(obj, type):
        raise ValueError(
            f"method {shown!r}: options are a class's constructor arguments, and {attr} is a "
            f"{type(obj).__name__}; drop them or name a class"
        )
    if isinstance(obj, type):
        obj = _keyed(_build(obj, shown, options), options, shown)
    if not callable(obj):
        raise ValueError(
            f"method {shown!r} is a {type(obj).__name__} ({obj!r:.60}), not a method: name a function, "
            "a class or a callable object"
        )
    return obj


def import_spec(fn: Any) -> str | None:
    """`import:<module>:<name>` for a function that spec loads back as itself (a module's top-level function),
    so a config file can name it; None for any other callable (a script's or notebook's function, a lambda,
    a nested function, a partial, an object), which no name reaches.

    >>> import_spec(import_spec), import_spec(lambda item: "")
    ('import:gacc_hf.methods.user_import:import_spec', None)
    """
    module, name = getattr(fn, "__module__", None), getattr(fn, "__qualname__", "")
    if not inspect.isfunction(fn) or not module or module == "__main__":
        return None
    loaded = sys.modules.get(module)
    return f"import:{module}:{name}" if loaded is not None and getattr(loaded, name, None) is fn else None


def _import(module: str, shown: str) -> ModuleType:
    try:
        return importlib.import_module(module)
    except SyntaxError as exc:
        raise ValueError(f"method {shown!r}: syntax error in {exc.filename} line {exc.lineno}: {exc.msg}") from exc
    except ImportError as exc:
        raise ValueError(f"cannot import method {shown!r}: {exc}") from exc
    except (Exception, SystemExit) as exc:  # the user's module ran and failed (or asked to exit) at import
        what = _exit_text(exc) if isinstance(exc, SystemExit) else f"raised {type(exc).__name__}: {exc}"
        raise ValueError(f"method {shown!r}: importing {module!r} {what} ({_where(exc, module)})") from exc


def _options(query: str, shown: str) -> dict[str, Any]:
    """The `?k=v&...` options of a spec as keyword arguments (numbers and booleans converted)."""
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=True)
    except ValueError:
        raise ValueError(f"method {shown!r}: options must be key=value pairs joined by '&'") from None
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys) or not all(k.isidentifier() for k in keys):
        raise ValueError(f"method {shown!r}: option names must be distinct Python identifiers, got {keys}")
    return {k: _value(v) for k, v in pairs}


def _value(text: str) -> Any:
    """An option's text as the int, float or bool it reads as, else as itself.

    >>> [_value(t) for t in ("5", "0.5", "true", "False", "small", "1e3")]
    [5, 0.5, True, False, 'small', 1000.0]
    """
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _keyed(obj: Any, options: dict[str, Any], shown: str) -> Any:
    """The instance with its options bound into its revision (see the module doc)."""
    if not options:
        return obj
    explicit = getattr(obj, "revision", None)
    try:
        if isinstance(explicit, str) and explicit:
            obj.revision = f"{explicit}?{urlencode(sorted(options.items()))}"
        else:
            obj.gacc_options = dict(sorted(options.items()))
    except AttributeError as exc:  # __slots__ or a read-only property
        raise ValueError(
            f"method {shown!r}: cannot record its options on the instance ({exc}), so they could not key the "
            "cache; give the class a writable `revision` attribute"
        ) from None
    return obj


def _build(cls: type, shown: str, options: dict[str, Any]) -> Any:
    """An instance of `cls` built with `options` as keyword arguments; refused, naming what it needs, when it
    cannot be."""
    try:
        inspect.signature(cls).bind(**options)
    except TypeError as exc:
        given = f"with options {sorted(options)}" if options else "without arguments"
        raise ValueError(
            f"method {shown!r}: class {cls.__qualname__} ({_defined_at(cls)}) cannot be built {given} "
            f"({exc}); give its parameters defaults, or name a function or an instance instead"
        ) from exc
    except ValueError:  # no signature to inspect (a C type): build it and let it say
        pass
    try:
        return cls(**options)
    except SystemExit as exc:
        raise ValueError(f"method {shown!r}: building {cls.__qualname__} {_exit_text(exc)}") from exc


def _exit_text(exc: SystemExit) -> str:
    return f"called sys.exit({exc.code!r}); a method must return or raise, never exit"


def _where(exc: BaseException, module: str) -> str:
    """`file line N` of the failure: the innermost frame in the user's module, else the innermost real frame."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not f.filename.startswith("<")]
    try:
        found = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        found = None
    origin = found.origin if found is not None else None
    own = [f for f in frames if f.filename == origin] or frames
    return f"{own[-1].filename} line {own[-1].lineno}" if own else f"module {module}"


def _defined_at(cls: type) -> str:
    try:
        return f"{inspect.getsourcefile(cls)} line {inspect.getsourcelines(cls)[1]}"
    except (OSError, TypeError):
        return f"module {cls.__module__}"
