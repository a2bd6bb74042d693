"""Profiles in pprof's format (``perftools.profiles.Profile``, generated from
Google's ``profile.proto``), gzipped as pprof tools expect them.

A Python frame becomes a pprof function named ``module.qualname`` (the
module found from the frame's file), its file and first line, and a location
per line of it that was seen. One mapping stands for the interpreter, marked
as already symbolized, so that pprof tools show the names as they are rather
than look for addresses to resolve.
"""

from __future__ import annotations

import gzip
import os
import sys
import time
from types import ModuleType

from sluice.collector.components.extensions.pprof.profile_pb2 import Profile

ValueType = tuple[str, str]
"""(type, unit), e.g. ``("cpu", "nanoseconds")``."""


def code_filename(name: str, module: ModuleType) -> str | None:
    """The file name the module's code objects carry: its source path, or
    ``<frozen name>`` for the standard modules frozen into the interpreter."""
    spec = getattr(module, "__spec__", None)
    if spec is not None and spec.origin == "frozen":
        return f"<frozen {name}>"
    path = getattr(module, "__file__", None)
    return os.path.abspath(path) if isinstance(path, str) else None


def module_names() -> dict[str, str]:
    """Code file name -> the module loaded from it (read once per profile)."""
    names: dict[str, str] = {}
    for name, module in list(sys.modules.items()):
        filename = code_filename(name, module)
        if filename is not None:
            names[filename] = name
    return names


class ProfileBuilder:
    """Interns strings, functions and locations while samples are added."""

    def __init__(
        self,
        sample_types: list[ValueType],
        period_type: ValueType,
        period: int,
        start_ns: int | None = None,
    ):
        self.profile = Profile()
        self._strings: dict[str, int] = {}
        self._functions: dict[tuple[str, str, int], int] = {}
        self._locations: dict[tuple[int, int], int] = {}
        self.string("")  # string_table[0] must be ""
        profile = self.profile
        for kind, unit in sample_types:
            profile.sample_type.add(type=self.string(kind), unit=self.string(unit))
        profile.period_type.type = self.string(period_type[0])
        profile.period_type.unit = self.string(period_type[1])
        profile.period = period
        profile.time_nanos = time.time_ns() if start_ns is None else start_ns
        interpreter = profile.mapping.add(id=1, filename=self.string(sys.executable))
        interpreter.has_functions = interpreter.has_filenames = True
        interpreter.has_line_numbers = True
        self._modules = module_names()

    def string(self, text: str) -> int:
        index = self._strings.get(text)
        if index is None:
            index = self._strings[text] = len(self.profile.string_table)
            self.profile.string_table.append(text)
        return index

    def qualified(self, qualname: str, filename: str) -> str:
        """``module.qualname`` when the file is a loaded module's, else the qualname."""
        module = self._modules.get(filename)
        if module is None:
            module = self._modules[filename] = self._modules.get(os.path.abspath(filename), "")
        return f"{module}.{qualname}" if module else qualname

    def location(self, name: str, filename: str, start_line: int, line: int) -> int:
        """The id of the location for `line` of the function `name`."""
        key = (name, filename, start_line)
        function_id = self._functions.get(key)
        if function_id is None:
            function_id = self._functions[key] = len(self._functions) + 1
            self.profile.function.add(
                id=function_id,
                name=self.string(name),
                system_name=self.string(name),
                filename=self.string(filename),
                start_line=start_line,
            )
        spot = (function_id, line)
        location_id = self._locations.get(spot)
        if location_id is None:
            location_id = self._locations[spot] = len(self._locations) + 1
            location = self.profile.location.add(id=location_id, mapping_id=1)
            location.line.add(function_id=function_id, line=line)
        return location_id

    def sample(self, location_ids: list[int], values: list[int], thread: str = "") -> None:
        """One sample: its stack leaf first, one value per sample type."""
        sample = self.profile.sample.add(location_id=location_ids, value=values)
        if thread:
            sample.label.add(key=self.string("thread"), str=self.string(thread))

    def gzipped(self, duration_ns: int = 0) -> bytes:
        self.profile.duration_nanos = duration_ns
        return gzip.compress(self.profile.SerializeToString(), compresslevel=6)
