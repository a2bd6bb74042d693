"""The OTTL condition grammar, for lark's LALR(1) parser.

Written from upstream's ``pkg/ottl/LANGUAGE.md`` and the participle grammar
of ``pkg/ottl/grammar.go`` (its lexer rules and their order, and the
precedence of its boolean rules): ``not`` binds tighter than ``and``, which
binds tighter than ``or``; a ``not`` negates one comparison, constant or
parenthesised group.

The grammar also recognises constructs that Sluice's condition subset does
not run (editors as values, math, lists, maps, converter indexing) so that
the compiler can name them in its error instead of reporting a bare syntax
error. An editor alone is not a boolean, as upstream's. Keywords (``and``, ``or``, ``not``, ``true``, ``false``, ``nil``) are
lark string terminals, which its lexer only takes for whole words, as
upstream's ``\b`` rules do. One difference remains: parentheses group
boolean expressions only. A parenthesised math expression (``(1 + 2) == 3``),
which upstream accepts and Sluice would refuse anyway, is a syntax error
here; it is what keeps the grammar LALR(1).
"""

from __future__ import annotations

import functools
from typing import Any

from sluice.policy.cache import default_directory

GRAMMAR = r"""
?start: or_expr

?or_expr: and_expr
        | or_expr _OR and_expr              -> or_
?and_expr: bool_value
         | and_expr _AND bool_value         -> and_
bool_value: [NOT] bool_atom
?bool_atom: comparison
          | TRUE                            -> true
          | FALSE                           -> false
          | converter
          | "(" or_expr ")"

comparison: value COMPARE value

?value: sum
      | NIL                                 -> nil
      | STRING                              -> string
      | TRUE                                -> true
      | FALSE                               -> false
      | BYTES                               -> bytes_
      | "[" [value ("," value)*] "]"        -> list_
      | "{" [map_item ("," map_item)* [","]] "}" -> map_
map_item: STRING ":" value

?sum: product
    | sum ADD_SUB product                   -> math
?product: operand
        | product MUL_DIV operand           -> math
?operand: INT                               -> int_
        | FLOAT                             -> float_
        | path
        | converter
        | editor
        | UPPER_NAME                        -> enum

path: field ("." field)*
field: LOWER_NAME key*
key: "[" (STRING | INT) "]"

converter: UPPER_NAME "(" [argument ("," argument)*] ")" key*
editor: LOWER_NAME "(" [argument ("," argument)*] ")" key*
argument: [LOWER_NAME "="] value

_OR: "or"
_AND: "and"
NOT: "not"
NIL: "nil"
TRUE: "true"
FALSE: "false"
COMPARE: "==" | "!=" | ">=" | "<=" | ">" | "<"
ADD_SUB: "+" | "-"
MUL_DIV: "*" | "/"
BYTES.4: /0x[a-fA-F0-9]+/
FLOAT.3: /[-+]?\d*\.\d+([eE][-+]?\d+)?/
INT.2: /[-+]?\d+/
STRING: /"(\\.|[^\\"])*"/
UPPER_NAME: /[A-Z][A-Za-z0-9_]*/
LOWER_NAME: /[a-z][a-z0-9_]*/

%import common.WS
%ignore WS
"""


@functools.cache
def parser() -> Any:
    """The LALR parser, built once per process. Building the tables takes
    ~90 ms (more on a busy machine); lark's cache of them loads in ~3 ms, so
    it is kept in Sluice's cache directory (where compiled pattern databases
    are kept; not the shared temporary directory, as it is a pickle)."""
    import lark

    options: dict[str, Any] = {}
    directory = default_directory()
    if directory is not None:
        try:
            directory.mkdir(parents=True, exist_ok=True)
            options["cache"] = str(directory / f"ottl-grammar-lark-{lark.__version__}.pickle")
        except OSError:
            pass  # no cache: built every time
    return lark.Lark(GRAMMAR, parser="lalr", maybe_placeholders=True, **options)
