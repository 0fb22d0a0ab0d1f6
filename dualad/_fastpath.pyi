"""Types of the optional compiled fast path (``_fastpath.c``; see its top comment)."""

from typing import Any

def install_core(
    tensor: type,
    active: list,
    grad: Any,
    modules: dict,
    np_scalars: frozenset,
    asarray: Any,
    empty: dict,
    miss: object,
    record: Any,
    opdef: type,
    ndarray: type,
    /,
) -> None: ...
def install_tape(
    opnode: type,
    argmeta: type,
    sequence: Any,
    accumulator: Any,
    record_hooks: list,
    duals_live: list,
    first: tuple,
    both: tuple,
    first_of_two: tuple,
    second_of_two: tuple,
    no_edge: tuple,
    /,
) -> None: ...
def set_recorder(record: Any, /) -> None: ...
def unary(state: tuple, x: object, /) -> Any: ...
def binary(state: tuple, a: object, b: object, /) -> Any: ...
