"""Let a subpackage be called as its main function: ``certpca.certify(fit)``, ``certpca.report(...)``.

``certpca.certify`` must be the subpackage (so ``import certpca.certify`` and its
submodules work) and also the function users call.  Python allows a module's
class to be replaced by a subclass of ``types.ModuleType`` (the data model's
"customizing module attribute access"); the subclass adds ``__call__``.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable


def make_callable(module_name: str, function: Callable) -> None:
    """Calling the module ``module_name`` calls ``function`` (same signature and docstring)."""

    class CallableModule(types.ModuleType):
        __call__ = staticmethod(function)

    module = sys.modules[module_name]
    module.__class__ = CallableModule
