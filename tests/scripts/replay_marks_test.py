#!/usr/bin/env python3
"""Tests of scripts/replay_marks.py with a stand-in for torch (no GPU needed): a marked call
reports its host time before the first replay and the replays' event time; calls outside
timed_call, and calls that replay nothing, are not marked; installing twice wraps once; and
scripts/validate_eager.py records a reduce-overhead point's marked calls.
    python3 tests/scripts/replay_marks_test.py
"""
import os
import sys
import time
import types
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import replay_marks  # noqa: E402


def fake_torch(replay_ms):
    """A torch with a CUDAGraph whose replay the events time at replay_ms, in milliseconds."""
    log = []

    class Event:
        def __init__(self, enable_timing=False):
            self.t = None

        def record(self):
            self.t = len(log)
            log.append("event")

        def elapsed_time(self, end):
            return replay_ms

    class CUDAGraph:
        def replay(self):
            log.append("replay")

    cuda = types.SimpleNamespace(CUDAGraph=CUDAGraph, Event=Event, synchronize=lambda: None)
    return types.SimpleNamespace(cuda=cuda), log


class ReplayMarksTest(unittest.TestCase):
    def test_a_marked_call_splits_the_cpu_before_the_replay_from_the_replay(self):
        torch, log = fake_torch(0.25)
        replay_marks.install(torch)
        g = torch.cuda.CUDAGraph()

        def call():
            time.sleep(0.002)  # the wrapper's work before the replay
            g.replay()
        before_us, replay_us = replay_marks.timed_call(torch, call)
        self.assertGreaterEqual(before_us, 2000)
        self.assertLess(before_us, 200000)
        self.assertAlmostEqual(replay_us, 250.0)
        self.assertEqual(log, ["event", "replay", "event"])

    def test_unmarked_calls_and_calls_without_a_replay(self):
        torch, log = fake_torch(0.1)
        replay_marks.install(torch)
        replay_marks.install(torch)  # once per process, however often asked
        g = torch.cuda.CUDAGraph()
        g.replay()  # outside timed_call: no events
        self.assertEqual(log, ["replay"])
        self.assertIsNone(replay_marks.timed_call(torch, lambda: None))

    def test_several_replays_add_their_gpu_time_and_the_first_starts_the_clock(self):
        torch, log = fake_torch(0.1)
        replay_marks.install(torch)
        a, b = torch.cuda.CUDAGraph(), torch.cuda.CUDAGraph()

        def call():
            a.replay()
            time.sleep(0.003)
            b.replay()
        before_us, replay_us = replay_marks.timed_call(torch, call)
        self.assertLess(before_us, 2500)
        self.assertAlmostEqual(replay_us, 200.0)


class ValidateEagerMarksTest(unittest.TestCase):
    def test_a_reduce_overhead_point_gets_the_medians_of_its_marked_calls_in_ms(self):
        import validate_eager
        torch, _ = fake_torch(0.4)
        replay_marks.install(torch)
        g = torch.cuda.CUDAGraph()
        fields = validate_eager.marked_fields(torch, g.replay, calls=5)
        self.assertEqual(set(fields), {"before_replay_ms", "replay_gpu_ms"})
        self.assertAlmostEqual(fields["replay_gpu_ms"], 0.4)
        self.assertLess(fields["before_replay_ms"], 1.0)
        self.assertEqual(validate_eager.marked_fields(torch, lambda: None, calls=3), {})


if __name__ == "__main__":
    unittest.main()
