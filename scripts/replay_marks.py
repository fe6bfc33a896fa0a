"""Marks the CUDA graph replays a call makes, with no profiler: the host clock as each replay
starts, and CUDA events recorded on either side of it on the current stream.

torch.compile's reduce-overhead mode runs a model's recorded graph through
torch.cuda.CUDAGraph.replay(); wrapping that method splits a call's time into the wrapper's CPU
work before the replay (Dynamo's guards, the graph tree's checks and copies of its inputs: the
GPU idles meanwhile) and the replay's time on the GPU.

    import replay_marks
    replay_marks.install(torch)           # once, before the first call
    before_us, replay_us = replay_marks.timed_call(torch, lambda: cm(x))

timed_call returns None for a call that replayed no graph.
"""
import time

_MARK = {"on": False, "before": [], "events": []}


def install(torch):
    """Wraps torch.cuda.CUDAGraph.replay (once per process); it marks replays only inside
    timed_call."""
    cls = torch.cuda.CUDAGraph
    if getattr(cls.replay, "_marks_replays", False):
        return
    inner = cls.replay

    def replay(self, *a, **k):
        if not _MARK["on"]:
            return inner(self, *a, **k)
        _MARK["before"].append(time.perf_counter())
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        try:
            return inner(self, *a, **k)
        finally:
            e.record()
            _MARK["events"].append((s, e))
    replay._marks_replays = True
    cls.replay = replay


def timed_call(torch, fn):
    """Calls fn with the GPU idle, waits for the GPU, and returns (µs from the call's start to
    its first replay's start on the host clock, µs the replays took on the GPU), or None when
    the call replayed no graph."""
    torch.cuda.synchronize()
    _MARK.update(on=True, before=[], events=[])
    t0 = time.perf_counter()
    try:
        fn()
        torch.cuda.synchronize()
    finally:
        _MARK["on"] = False
    if not _MARK["before"]:
        return None
    gpu_ms = sum(s.elapsed_time(e) for s, e in _MARK["events"])
    return (_MARK["before"][0] - t0) * 1e6, gpu_ms * 1e3
