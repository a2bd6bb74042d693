"""Command lines read as the collector's and the builder's are upstream
(cobra over pflag): a bad one is answered with one ``Error: ...`` line in
cobra's words and exit status 1, boolean flags take ``--flag``,
``--flag=true`` or ``--flag=false``, and a long flag is never abbreviated."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from sluice.gostrconv import parse_bool

_ARGUMENT = re.compile(r"^argument (\S+): (.*)$", re.S)
_BAD_BOOL = re.compile(r'^strconv\.ParseBool: parsing "(.*)": invalid syntax$', re.S)


def go_bool(text: str) -> bool:
    """Go's ``strconv.ParseBool``, as pflag reads a boolean flag's value."""
    value = parse_bool(text)
    if value is not None:
        return value
    raise argparse.ArgumentTypeError(f'strconv.ParseBool: parsing "{text}": invalid syntax')


class CommandParser(argparse.ArgumentParser):
    """argparse with cobra's conventions (see the module's docstring)."""

    def __init__(self, **kwargs: Any):
        super().__init__(allow_abbrev=False, **kwargs)
        self._switches: set[str] = set()

    def add_switch(self, name: str, help: str, default: bool = False) -> None:
        """A boolean flag: ``name``, ``name=true`` or ``name=false``."""
        self._switches.add(name)
        self.add_argument(
            name, nargs="?", const=True, default=default, type=go_bool, metavar="BOOL", help=help
        )

    def parse(self, argv: Sequence[str] | None) -> argparse.Namespace:
        """`argv` (the process's arguments when None) parsed; a bad command
        line exits 1 with cobra's message."""
        args = list(sys.argv[1:] if argv is None else argv)
        # A bare switch never takes the next argument as its value (pflag's
        # NoOptDefVal): it is given its value here.
        end = args.index("--") if "--" in args else len(args)
        args[:end] = [f"{a}=true" if a in self._switches else a for a in args[:end]]
        return self.parse_args(args)

    def error(self, message: str) -> NoReturn:
        self.exit(1, f"Error: {self.cobra_words(message)}\n")

    def cobra_words(self, message: str) -> str:
        """argparse's `message` as cobra or pflag word the same problem."""
        if message.startswith("unrecognized arguments: "):
            token = message.removeprefix("unrecognized arguments: ").split(" ")[0]
            if token.startswith("--"):
                return f"unknown flag: {token.split('=')[0]}"
            if token.startswith("-") and len(token) > 1:
                return f"unknown shorthand flag: '{token[1]}' in {token}"
            return self.unknown_command(token)
        found = _ARGUMENT.match(message)
        if found is None:
            return message
        flag, problem = found[1].split("/")[-1], found[2]
        if problem.startswith("expected one argument"):
            return f"flag needs an argument: {flag}"
        value = _BAD_BOOL.match(problem)
        if value is not None:
            return f'invalid argument "{value[1]}" for "{flag}" flag: {problem}'
        return f"{flag}: {problem}"

    def unknown_command(self, name: str) -> str:
        return f'unknown command "{name}" for "{self.prog}"'
