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
def install_forward(
    rules: dict, default_dtype: list, level_type: type, view_type: type, /
) -> None: ...
def forward_alone(level: object, op: object, args: tuple, /) -> Any: ...
def forward_entry(level: object, fallback: Any, op: object, args: tuple, stack: list, /) -> Any: ...
def run_plan(plan: tuple, a: Any, ta: Any, b: Any, tb: Any, /) -> tuple: ...
def match_graph(plan: tuple, root: object, grad_data: Any, /) -> Any: ...
def release_graph(kinds: tuple, nodes: tuple, /) -> None: ...

class Method:
    """A fast caller as a Tensor operator method."""

    __wrapped__: Any
    def __init__(self, state: tuple, fallback: Any, nargs: int, /) -> None: ...
    def __call__(self, *args: Any) -> Any: ...
