"""`import:<module>:<attribute>`: a method from the user's own module, refused before any work when unusable.

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


def load(spec: str) -> Any:
    """The method `import:<spec>` names: a class (built without arguments), a function or an instance.

    The working directory is searched too (after the installed packages), as `python -m` does, so a
    module beside the user is found the same way under the `gacc` script and `accelerate launch`.
    """
    module, sep, attr = spec.partition(":")
    shown = f"import:{spec}"
    if not sep or not module or not attr:
        raise ValueError(f"expected import:<module>:<attribute>, got {shown}")
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.append(os.getcwd())
    try:
        obj = getattr(_import(module, shown), attr)
    except AttributeError as exc:
        raise ValueError(f"cannot import method {shown!r}: {exc}") from exc
    if isinstance(obj, type):
        obj = _build(obj, shown)
    if not callable(obj):
        raise ValueError(
            f"method {shown!r} is a {type(obj).__name__} ({obj!r:.60}), not a method: name a function, "
            "a class or a callable object"
        )
    return obj


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


def _build(cls: type, shown: str) -> Any:
    """An instance of `cls` built without arguments; refused, naming what it needs, when it cannot be."""
    try:
        inspect.signature(cls).bind()
    except TypeError as exc:
        raise ValueError(
            f"method {shown!r}: class {cls.__qualname__} ({_defined_at(cls)}) cannot be built without "
            f"arguments ({exc}); give its parameters defaults, or name a function or an instance instead"
        ) from exc
    except ValueError:  # no signature to inspect (a C type): build it and let it say
        pass
    try:
        return cls()
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
