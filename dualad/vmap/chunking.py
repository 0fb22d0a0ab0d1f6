"""Chunked loops of the batched transforms (``vmap``, ``jacrev``, ``jacfwd``, ``hessian``):
``chunk_size=None`` (one chunk), an int, or ``"auto"`` with a memory budget ``max_memory``,
and the optional progress bar (``progress=True``, tqdm).

How ``"auto"`` chooses the chunk (measured, not guessed from shapes: the wide values are the
function's intermediate ones, which no input or output size shows):

- the budget covers the whole transformed call: from its first line (jacrev's forward pass
  included) to the returned result, measured as the peak of the array memory it allocates
  above what was allocated when it was called: tracemalloc (which sees NumPy's arrays) on the
  host, plus CuPy's memory pool on a GPU;
- a first probe chunk of one row (one basis vector, one example) and a second of up to 8 rows
  (when even at the first one's peak per row it fits in the budget) are run under that
  measurement; their peaks give the memory per row (the slope) and per chunk (the intercept)
  of the batched evaluation, what they left allocated the memory each chunk's piece of the
  result keeps besides its data (its Python objects: it counts once per chunk), and their
  results' bytes the size of the whole result. Their rows are kept: nothing is computed twice;
- the remaining rows run in chunks of the largest size whose projected peak (what is held
  after the probes, the rest of the result, each piece's own keep, and the larger of a chunk's
  intercept plus slope times its rows and the concatenated result, a second copy of it) stays
  within ``SAFETY`` (80%) of the budget, or else within the whole budget. The slope is never
  taken below the result's bytes per row, so noise in the probes cannot make it small. When
  no chunk size fits, ValueError says what the call holds and one row needs (after the first
  row has run: the first row itself can exceed a budget too small for it);
- the memory is the process's: calls with ``"auto"`` in several threads run one at a time
  (other threads' arrays would count in each one's measurement);
- tracing with tracemalloc slows Python code down, so it stops after the probes when this
  module started it. When the caller is already tracing (measuring this call), the caller's
  peak is kept: the probes reset the peak to measure themselves, and at the end the caller's
  earlier peak is put back by allocating (and freeing at once) an untouched NumPy buffer that
  makes tracemalloc's peak reach it again.

The default budget (``chunk_size="auto"`` with ``max_memory=None``): half the memory available
when the call starts, ``MemAvailable`` of ``/proc/meminfo`` on the host (half the physical
memory where that file does not exist), half the device's free memory (and the pool's cached
free blocks) when the arguments live on a GPU.
"""

from __future__ import annotations

import os
import re
import sys
import threading
import tracemalloc

import numpy as np

from .._backend import module_for, xp_of
from .._tensor import Tensor

# The memory measured is the process's (tracemalloc is one per process), so "auto" calls in
# several threads at once would count each other's arrays and reset or stop each other's
# tracing: they run one at a time (an RLock: "auto" calls may nest)
_AUTO_CALLS = threading.RLock()
SAFETY = 0.8  # the share of the budget the projected peak may reach (the rest: model error)
PROBE_ROWS = 8  # the second probe's rows (at most): a lever long enough for the slope
_UNITS = {
    "": 1,
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
}
_MEMORY = re.compile(r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]*)\s*")


def parse_memory(value, name: str) -> int:
    """``max_memory`` in bytes: a positive int or float, or a string such as ``"1GB"``,
    ``"512MiB"``, ``"1.5 GB"`` (kB/MB/GB/TB are powers of 1000, KiB/MiB/GiB/TiB of 1024).

    >>> parse_memory("512MiB", "jacrev"), parse_memory(10**6, "jacrev")
    (536870912, 1000000)
    """
    if isinstance(value, str):
        match = _MEMORY.fullmatch(value)
        unit = match.group(2).lower() if match else None
        if unit not in _UNITS:
            raise ValueError(
                f"{name}: max_memory={value!r} is not a memory size; write a number of bytes or "
                "a string such as '1GB', '512MiB' (units B, kB, MB, GB, TB, KiB, MiB, GiB, TiB)"
            )
        size = float(match.group(1)) * _UNITS[unit]
    elif isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        size = float(value)
    else:
        raise TypeError(
            f"{name}: max_memory must be a number of bytes or a string such as '1GB', got "
            f"{type(value).__name__}"
        )
    if not (np.isfinite(size) and size >= 1):
        raise ValueError(f"{name}: max_memory must be a positive number of bytes, got {value!r}")
    return int(size)


def check_chunking(chunk_size, max_memory, progress, name: str) -> None:
    """The chunking arguments of a transform, checked when the transform is made."""
    if isinstance(chunk_size, str):
        if chunk_size != "auto":
            raise ValueError(
                f"{name}: chunk_size must be None, a positive int or 'auto', got {chunk_size!r}"
            )
    elif chunk_size is not None and (
        not isinstance(chunk_size, int) or isinstance(chunk_size, bool) or chunk_size <= 0
    ):
        raise ValueError(f"{name}: `chunk_size` should be greater than 0. (got {chunk_size!r})")
    if max_memory is not None:
        parse_memory(max_memory, name)
        if chunk_size != "auto":
            raise ValueError(
                f"{name}: max_memory={max_memory!r} is the budget of chunk_size='auto'; it "
                f"cannot apply to chunk_size={chunk_size!r}"
            )
    if not isinstance(progress, bool):
        raise TypeError(f"{name}: progress must be True or False, got {progress!r}")


def default_memory(like) -> int:
    """Half the memory available now where ``like`` lives (a Tensor, any level's, or an array;
    see the module's docstring)."""
    xp = module_for(like.device) if isinstance(like, Tensor) else xp_of(like)
    if xp is not np:
        free = xp.cuda.runtime.memGetInfo()[0]
        pool = xp.get_default_memory_pool()
        return (free + pool.free_bytes()) // 2
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024 // 2
    except OSError:
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2


def _progress_bar(total: int, name: str):
    try:
        # (tqdm is optional: imported only when a progress bar is asked for)
        from tqdm.auto import tqdm
    except ImportError:
        raise ImportError(
            f"{name}: progress=True shows a tqdm progress bar, and tqdm is not installed; "
            "install it with `pip install tqdm` (or `pip install 'dualad[progress]'`)"
        ) from None
    return tqdm(total=total, desc=name, unit="row")


class _CupyPeak:
    """The device bytes CuPy's pools hand out, and their peak, while it is entered (a CuPy
    memory hook; made only when CuPy is in use)."""

    def __init__(self, cupy):
        hook_base = cupy.cuda.MemoryHook
        meter = self

        class Hook(hook_base):
            name = "dualad_chunking"

            def malloc_postprocess(self, device_id, size, mem_size, mem_ptr, pmem_id):
                meter.used += mem_size
                meter.peak = max(meter.peak, meter.used)

            def free_postprocess(self, device_id, mem_size, mem_ptr, pmem_id):
                meter.used -= mem_size

        self.used = 0
        self.peak = 0
        self.hook = Hook()
        self.hook.__enter__()

    def reset_peak(self) -> None:
        self.peak = self.used

    def close(self) -> None:
        self.hook.__exit__(None, None, None)


class Meter:
    """The array memory allocated since it was made (see the module's docstring): ``used()``
    now, ``peak()`` since the last ``reset_peak()``, both above the start."""

    def __init__(self):
        self.owned = not tracemalloc.is_tracing()
        if self.owned:
            tracemalloc.start()
        # (outer_peak: the highest peak tracemalloc has shown, which the caller, when it
        # traces, must see again after close)
        self.origin, self.outer_peak = tracemalloc.get_traced_memory()
        cupy = sys.modules.get("cupy")  # (CuPy's pool counts only where CuPy is in use)
        self.device = _CupyPeak(cupy) if cupy is not None else None
        self.open = True

    def used(self) -> int:
        device = self.device.used if self.device is not None else 0
        return tracemalloc.get_traced_memory()[0] - self.origin + device

    def reset_peak(self) -> None:
        # (the peak about to be forgotten: the caller's own peak must still reach it)
        self.outer_peak = max(self.outer_peak, tracemalloc.get_traced_memory()[1])
        tracemalloc.reset_peak()
        if self.device is not None:
            self.device.reset_peak()

    def peak(self) -> int:
        device = self.device.peak if self.device is not None else 0
        return tracemalloc.get_traced_memory()[1] - self.origin + device

    def close(self) -> None:
        """Stop measuring; tracemalloc stops if this meter started it, else the caller's peak
        is put back (module docstring)."""
        if not self.open:
            return
        self.open = False
        if self.device is not None:
            self.device.close()
        if self.owned:
            tracemalloc.stop()
            return
        current, peak = tracemalloc.get_traced_memory()
        if self.outer_peak > peak:
            # np.empty: allocated and freed without touching its pages, so it costs no memory
            lift = np.empty(self.outer_peak - current, dtype=np.uint8)
            del lift


def _nbytes(result) -> int:
    """The bytes of the arrays in a chunk's result (a Tensor or a list/tuple/dict of them)."""
    if isinstance(result, (list, tuple)):
        return sum(_nbytes(item) for item in result)
    if isinstance(result, dict):
        return sum(_nbytes(item) for item in result.values())
    shape = getattr(result, "shape", None)
    dtype = getattr(result, "dtype", None)
    if shape is None or dtype is None:
        return 0
    return int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize


class Chunking:
    """One call's chunked loop: ``with Chunking(...) as chunks:`` around the transformed call
    (so that ``"auto"`` measures it from its start), ``chunks.run(run, total, like)`` for the
    loop."""

    def __init__(self, chunk_size, max_memory, progress: bool, name: str):
        self.chunk_size = chunk_size
        self.max_memory = max_memory
        self.progress = progress
        self.name = name
        self.meter = None
        self.model = (0, 0, 0, 0, 0)

    def __enter__(self):
        if self.chunk_size == "auto":
            _AUTO_CALLS.acquire()
            try:
                self.meter = Meter()
            except BaseException:
                _AUTO_CALLS.release()
                raise
        return self

    def __exit__(self, *exc) -> None:
        if self.meter is not None:
            try:
                self.meter.close()
            finally:
                _AUTO_CALLS.release()

    def run(self, run, total: int, like) -> list:
        """``[run(start, stop), ...]`` over ``range(total)`` in chunks; ``like``: an array or
        Tensor of the computation (where the default budget is looked up)."""
        bar = _progress_bar(total, self.name) if self.progress else None
        try:
            if self.chunk_size == "auto":
                return self._run_auto(run, total, like, bar)
            size = total if self.chunk_size is None else self.chunk_size
            pieces = []
            for start in range(0, total, size):
                stop = min(start + size, total)
                pieces.append(run(start, stop))
                if bar is not None:
                    bar.update(stop - start)
            return pieces
        finally:
            if bar is not None:
                bar.close()

    def _run_auto(self, run, total: int, like, bar) -> list:
        meter = self.meter
        budget = (
            default_memory(like)
            if self.max_memory is None
            else parse_memory(self.max_memory, self.name)
        )
        pieces = []
        kept = []  # what each measured chunk left allocated (its piece, data and objects)

        def measured(start: int, stop: int) -> int:
            before = meter.used()
            meter.reset_peak()
            pieces.append(run(start, stop))
            kept.append(meter.used() - before)
            if bar is not None:
                bar.update(stop - start)
            return meter.peak() - before  # this chunk's transient peak

        first = measured(0, 1)
        row = max(_nbytes(pieces[0]), 1)  # the result's bytes per row
        done = 1
        # a second probe as long as PROBE_ROWS, if even at `first` bytes per row it fits
        second = min(PROBE_ROWS, total - done)
        while second >= 2 and meter.used() + row * total + first * second > SAFETY * budget:
            second -= 1
        slope, intercept = float(first), 0.0
        if second >= 2:
            peak = measured(done, done + second)
            done += second
            slope = max((peak - first) / (second - 1), float(row))
            intercept = max(first - slope, peak - slope * second, 0.0)
        # what a piece keeps besides its data (the Python objects of its Tensors), once per
        # chunk: what makes many small chunks costly to keep (the last probe's: the first one
        # also holds what the first call of anything allocates once)
        overhead = max(kept[-1] - row * (done if len(kept) == 1 else second), 0)
        self.model = (meter.used(), row * (total - done), row * total, total - done, overhead)
        meter.close()  # (the rest runs untraced: tracemalloc slows Python code down)
        size = self._fits(slope, intercept, SAFETY * budget) or self._fits(slope, intercept, budget)
        if not size:
            raise ValueError(
                f"{self.name}: max_memory={_fmt(budget)} is too small: the call holds "
                f"{_fmt(self.model[0])} after its first {done} rows, the result takes "
                f"{_fmt(row * total)} (twice while its chunks are joined), each chunk keeps "
                f"{_fmt(overhead)} more, and one row at a time needs {_fmt(intercept + slope)} "
                "while it runs"
            )
        for start in range(done, total, size):
            stop = min(start + size, total)
            pieces.append(run(start, stop))
            if bar is not None:
                bar.update(stop - start)
        return pieces

    def _fits(self, slope: float, intercept: float, budget: float) -> int:
        """The most rows per chunk (0: none) for the remaining rows whose projected peak stays
        within ``budget``: what the call holds now, the rest of the result, what each of the
        pieces keeps besides its data, and the larger of a chunk's ``intercept + slope * k``
        and the joined result."""
        now, rest, result, remaining, overhead = self.model
        if remaining == 0:
            return 1
        for k in _descending(remaining):
            held = now + rest + -(-remaining // k) * overhead
            if held + max(intercept + slope * k, result) <= budget:
                return k
        return 0


def _descending(total: int):
    """Chunk sizes to try, largest first: every size up to 64, then a geometric grid (the
    projected peak is a convex function of the size, so the first that fits is near the
    largest)."""
    k = total
    while k > 64:
        yield k
        k = int(k / 1.05)
    yield from range(k, 0, -1)


def _fmt(size: float) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if size >= scale:
            return f"{size / scale:.3g} {unit}"
    return f"{int(size)} B"


__all__ = ["Chunking", "check_chunking", "default_memory", "parse_memory"]
