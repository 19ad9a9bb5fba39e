"""The project's exception and warning types."""


class InputError(ValueError):
    """Bad user input: the message is one line naming the problem and the fix.

    The command line prints it as ``certpca: error: <message>`` and exits with 2.
    """


class ConvergenceWarning(UserWarning):
    """An iterative method stopped at its iteration limit before its tolerance."""
