"""The project's exception and warning types."""

from __future__ import annotations


class InputError(ValueError):
    """Bad user input: the message is one line naming the problem and the fix.

    When the problem is one argument, ``param`` names it (the Python parameter)
    and ``detail`` is the message without that name, so the command line can say
    the same thing with its own flag: ``k must be ...`` becomes ``--k must be ...``.
    The command line prints it as ``certpca: error: <message>`` and exits with 2.
    """

    def __init__(self, message: str, *, param: str | None = None, detail: str | None = None):
        super().__init__(message)
        self.param = param
        self.detail = detail

    @classmethod
    def bad_argument(cls, param: str, detail: str) -> InputError:
        """``<param> <detail>``, remembering both parts."""
        return cls(f"{param} {detail}", param=param, detail=detail)

    def renamed(self, name: str) -> str:
        """The message with the parameter called ``name`` (e.g. a CLI flag)."""
        return f"{name} {self.detail}" if self.param is not None else str(self)


class ConvergenceWarning(UserWarning):
    """An iterative method stopped at its iteration limit before its tolerance."""


class TooLarge(MemoryError):
    """A computation would form an array beyond a documented memory limit (the message says which).

    A certificate skips a bound that raises it, with the message as the reason.
    """
