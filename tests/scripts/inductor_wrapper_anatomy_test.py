#!/usr/bin/env python3
"""validation/scripts/inductor_wrapper_anatomy.py: the statements of a compiled wrapper's `call`,
counted by kind, on a hand-written wrapper and on the stored ViT-B/32 wrapper of host run bc
(whose counts the same script recorded on the GPU host)."""
import json
import lzma
import os
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "validation", "scripts"))
import inductor_wrapper_anatomy as anatomy  # noqa: E402

WRAPPER = '''
def helper(x):
    return x.run(1)

class Runner:
    def call(self, args):
        arg0_1, arg1_1, arg2_1 = args
        args.clear()
        assert_size_stride(arg0_1, (1, 8), (8, 1))
        assert_size_stride(arg1_1, (8, 8), (8, 1))
        with torch.cuda._DeviceGuard(0):
            buf0 = empty_strided_cuda((1, 8), (8, 1), torch.float16)
            # Topologically Sorted Source Nodes: [torch.ops.aten.addmm(x)]
            extern_kernels.addmm(arg2_1, arg0_1, reinterpret_tensor(arg1_1, (8, 8), (1, 8), 0), out=buf0)
            del arg1_1
            stream0 = get_raw_stream(0)
            triton_poi_fused_gelu_0.run(buf0, 8, stream=stream0)
            buf1 = torch.ops.aten._scaled_dot_product_cudnn_attention.default(buf0, buf0, buf0, None, False)
            del buf0
        return (buf1, )

def benchmark_compiled_module():
    triton_poi_fused_gelu_0.run(None)
'''


class CountTest(unittest.TestCase):
    def test_a_hand_written_wrapper(self):
        counts, inputs = anatomy.count_statements(WRAPPER)
        self.assertEqual(inputs, 3)
        self.assertEqual(counts, {"triton_launches": 1, "extern_calls": 1, "aten_fallbacks": 1, "allocations": 1,
                                  "reinterprets": 1, "asserts": 2, "deletes": 2})

    def test_the_stored_vit_wrapper_gives_the_counts_recorded_with_it(self):
        run = os.path.join(ROOT, "validation", "h200", "2026-11-27bc")
        with lzma.open(os.path.join(run, "inductor-wrapper-vit_b_32.b1.py.xz"), "rt") as f:
            counts, inputs = anatomy.count_statements(f.read())
        with open(os.path.join(run, "inductor-wrapper-anatomy.json")) as f:
            row = next(r for r in json.load(f)["rows"] if r["model"] == "vit_b_32")
        self.assertEqual(counts, row["statements"])
        self.assertEqual(inputs, row["graph_inputs"])
        self.assertEqual(counts["triton_launches"], 75)


if __name__ == "__main__":
    unittest.main()
