#!/usr/bin/env python3
"""validation/scripts/compiled_call_anatomy.py: the variants of a compiled wrapper whose
statements of one kind run twice, on a hand-written wrapper and on the stored ViT-B/32 wrapper
of host run bc: each variant is valid Python, doubles exactly the statements of its kind (and
no other line), and leaves the code outside `call` alone."""
import lzma
import os
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "validation", "scripts"))
import compiled_call_anatomy as anatomy  # noqa: E402

WRAPPER = '''
def helper(x):
    return x.run(1)

class Runner:
    def call(self, args):
        arg0_1, arg1_1, arg2_1, arg3_1 = args
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
            triton_poi_fused_add_1.run(buf0, arg2_1, arg3_1, arg0_1, 8, stream=stream0)
            buf1 = torch.ops.aten._scaled_dot_product_cudnn_attention.default(buf0, buf0, buf0, None, False)
            buf2 = reinterpret_tensor(buf0, (8, ), (1, ), 0); del buf0  # reuse
        return (buf1, buf2)

def benchmark_compiled_module():
    triton_poi_fused_gelu_0.run(None)
'''


class VariantTest(unittest.TestCase):
    def test_counts_by_kind(self):
        c = anatomy.counts(WRAPPER)
        self.assertEqual(c, {"triton_le3": 1, "triton_ge4": 1, "extern": 1, "fallback": 1, "assert": 2,
                             "alloc": 1, "stream": 1, "reinterpret": 2, "graph_inputs": 4})

    def test_each_variant_doubles_its_kind_only(self):
        base = WRAPPER.splitlines()
        for kind in anatomy.KINDS:
            with self.subTest(kind=kind):
                src, n = anatomy.variant(WRAPPER, kind)
                compile(src, "variant", "exec")
                self.assertEqual(n, anatomy.counts(WRAPPER)[kind])
                lines = src.splitlines()
                self.assertEqual(len(lines), len(base) + n)
                # The code outside `call` is untouched (the helper's .run is not a launch of call's).
                self.assertEqual(lines[-2:], base[-2:])
                self.assertEqual(lines[:5], base[:5])

    def test_reinterprets_are_called_again_before_their_line(self):
        src, n = anatomy.variant(WRAPPER, "reinterpret")
        self.assertEqual(n, 2)
        lines = src.splitlines()
        i = next(k for k, l in enumerate(lines) if "buf2 = reinterpret_tensor" in l)
        self.assertEqual(lines[i - 1].strip(), "_ftax_dup = reinterpret_tensor(buf0, (8, ), (1, ), 0)")

    def test_triton_launches_split_by_tensors_passed(self):
        self.assertEqual(anatomy.kind_of("    k.run(buf0, arg1_1, buf2, 8, 16, stream=stream0)"), "triton_le3")
        self.assertEqual(anatomy.kind_of("    k.run(buf0, arg1_1, buf2, buf3, 8, stream=stream0)"), "triton_ge4")

    def test_an_unknown_chain_names_the_ones_there_are(self):
        with self.assertRaises(ValueError) as e:
            anatomy.chain(None, "chain:layer8", "cuda")  # refused before torch is needed
        self.assertIn("convbnN", str(e.exception))

    def test_stored_vit_wrapper(self):
        path = os.path.join(ROOT, "validation", "h200", "2026-11-27bc", "inductor-wrapper-vit_b_32.b1.py.xz")
        with lzma.open(path, "rt") as f:
            code = f.read()
        c = anatomy.counts(code)
        # inductor_wrapper_anatomy.py counted 75 launches, 50 extern calls, 12 fallbacks and 153
        # graph inputs in the same wrapper on the GPU host.
        self.assertEqual(c["triton_le3"] + c["triton_ge4"], 75)
        self.assertEqual((c["extern"], c["fallback"], c["graph_inputs"]), (50, 12, 153))
        for kind in anatomy.KINDS:
            src, n = anatomy.variant(code, kind)
            compile(src, "variant", "exec")
            self.assertEqual(n, c[kind])


if __name__ == "__main__":
    unittest.main()
