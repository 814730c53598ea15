"""A stand-in for a native library whose teardown aborts the process, for tests of how processes end.

A C++ library registers its static destructors with `__cxa_atexit`, and they run in C's `exit()`, after the
interpreter is finalized; one that finds a thread still joinable calls `std::terminate` (SIGABRT). Now and
then is not testable; registering `abort` there is the same failure every time, at the same point.
"""

#: Python source that makes the process abort in its native teardown (glibc, Linux).
ABORT_IN_NATIVE_TEARDOWN = "import ctypes as _c; _libc = _c.CDLL(None); _libc.__cxa_atexit(_libc.abort, None, None)\n"
