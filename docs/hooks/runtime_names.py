"""Griffe extension: a package's name means what `import` gives, not a same-named submodule.

`dualtape.testing.check_modes` is the function (the package imports it from its submodule
`check_modes`), but griffe, reading the sources, lets a submodule shadow the package's
member of the same name and would document the module instead. Where the imported object
at run time is not a module and was defined in that submodule, this points the package's
member back at it. The package's other aliases are resolved first, so those that go
through the submodule's path (`dualtape.testing.check_modes.ModeFailure`) still find it.
"""

import importlib
import inspect

import griffe


def _modules(module):
    yield module
    for sub in module.modules.values():
        if not sub.is_alias:
            yield from _modules(sub)


def _runtime_member(module_path, name):
    try:
        return getattr(importlib.import_module(module_path), name)
    except Exception:  # noqa: BLE001 - a module that does not import is documented as read
        return None


class RuntimeNames(griffe.Extension):
    def on_package(self, *, pkg, **kwargs):
        for module in list(_modules(pkg)):
            for name, member in list(module.members.items()):
                if member.is_alias or not member.is_module:
                    continue
                runtime = _runtime_member(module.path, name)
                if runtime is None or inspect.ismodule(runtime):
                    continue
                if getattr(runtime, "__module__", None) != member.path or name not in member.members:
                    continue
                for other in module.members.values():
                    if other.is_alias:
                        try:
                            other.resolve_target()
                        except (griffe.AliasResolutionError, griffe.CyclicAliasError):
                            pass
                module.members[name] = griffe.Alias(name, member.members[name], parent=module)
