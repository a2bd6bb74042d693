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


def distance(a: str, b: str) -> int:
    """Levenshtein distance of `a` and `b` ignoring case, as cobra's ``ld``."""
    a, b = a.lower(), b.lower()
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        previous, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (x != y))
    return row[-1]


class CommandParser(argparse.ArgumentParser):
    """argparse with cobra's conventions (see the module's docstring).

    `commands` are the subcommands of a root command that leaves its
    arguments to cobra's default check (the collector's): an unknown one is
    answered with the commands it may have meant and the hint to run
    ``--help``. Without them (ocb, whose root takes ``cobra.NoArgs``), the
    error is the one line."""

    def __init__(self, commands: Sequence[str] | None = None, **kwargs: Any):
        super().__init__(allow_abbrev=False, **kwargs)
        self._switches: set[str] = set()
        self._commands = commands

    def add_switch(
        self, name: str, help: str, default: bool = False, short: str | None = None
    ) -> None:
        """A boolean flag: ``name``, ``name=true`` or ``name=false`` (and the
        same with its shorthand `short`)."""
        names = [name] if short is None else [short, name]
        self._switches.update(names)
        self.add_argument(
            *names, nargs="?", const=True, default=default, type=go_bool, metavar="BOOL", help=help
        )

    def parse(self, argv: Sequence[str] | None) -> argparse.Namespace:
        """`argv` (the process's arguments when None) parsed; a bad command
        line exits 1 with cobra's message."""
        args = list(sys.argv[1:] if argv is None else argv)
        # A bare switch never takes the next argument as its value (pflag's
        # NoOptDefVal): it is given its value here.
        end = args.index("--") if "--" in args else len(args)
        args[:end] = [f"{a}=true" if a in self._switches else a for a in args[:end]]
        # pflag takes arguments among the flags (interspersed): `validate
        # --config c.yaml extra` has the two arguments validate and extra.
        return self.parse_intermixed_args(args)

    def error(self, message: str) -> NoReturn:
        words = self.cobra_words(message)
        if self._commands is not None and words.startswith("unknown command "):
            words += f"\nRun '{self.prog} --help' for usage."
        self.exit(1, f"Error: {words}\n")

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
        """Cobra's words, with its suggestions: the commands within two edits
        of `name` or starting with it, ignoring case."""
        suggested = [
            command
            for command in self._commands or ()
            if distance(name, command) <= 2 or command.lower().startswith(name.lower())
        ]
        listed = "".join(f"\t{command}\n" for command in suggested)
        hint = f"\n\nDid you mean this?\n{listed}" if suggested else ""
        return f'unknown command "{name}" for "{self.prog}"{hint}'
