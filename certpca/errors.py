"""The project's exception and warning types."""

from __future__ import annotations

import re
from collections.abc import Callable

#: a parameter named in a message: `name` or `name=value` (a Python literal)
_PARAMETER = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)(?:=([^`]*))?`")


class InputError(ValueError):
    """Bad user input: the message is one line naming the problem and the fix.

    A message names the parameters it is about in backticks, as Python spells them
    (`` `k` `` or `` `na='mean'` ``); ``str(err)`` shows them without the backticks
    (``k``, ``na='mean'``) and :meth:`renamed` in another caller's words, so the
    command line says ``--k`` and ``--na mean`` instead.  ``param`` is the argument the
    message is about, when it is one (:meth:`bad_argument`).  The command line prints
    it as ``certpca: error: <message>`` and exits with 2.
    """

    def __init__(self, message: str, *, param: str | None = None):
        super().__init__(_PARAMETER.sub(lambda m: m.group(0)[1:-1], message))
        self.template = message
        self.param = param

    @classmethod
    def bad_argument(cls, param: str, detail: str) -> InputError:
        """``<param> <detail>``, remembering the parameter."""
        return cls(f"`{param}` {detail}", param=param)

    def renamed(self, name_of: Callable[[str], str | None]) -> str:
        """The message with every parameter spelled ``name_of(param)`` (e.g. a command-line flag), and
        ``param=value`` as ``flag value`` (``flag`` alone for True); a parameter without a name stays."""

        def spell(m: re.Match) -> str:
            param, value = m.group(1), m.group(2)
            name = name_of(param)
            if name is None:
                return m.group(0)[1:-1]
            if value is None or value == "True":
                return name
            return f"{name} {value.strip(chr(39) + chr(34))}"

        return _PARAMETER.sub(spell, self.template)


class ConvergenceWarning(UserWarning):
    """An iterative method stopped at its iteration limit before its tolerance."""


class TooLarge(MemoryError):
    """A computation would form an array beyond a documented memory limit (the message says which).

    A certificate skips a bound that raises it, with the message as the reason.
    """
