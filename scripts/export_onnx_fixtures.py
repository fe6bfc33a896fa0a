#!/usr/bin/env python3
"""Export real architectures as structure-only ONNX fixtures for ftax's tests.

Every model is built from its config with random weights (nothing is downloaded), exported
with torch.onnx at batch 1 (batch left symbolic as `batch`, sequence as `seq`), and then
stripped: every initializer larger than 64 elements is turned into an external-data reference
to a file that is NOT written ("weights.bin"), so the committed .onnx holds only the graph,
the dims and dtypes of the weights, and the small integer constants shape arithmetic needs.
ftax never reads weight bytes, so these files inspect exactly like the full models.

Usage:
  python3 -m venv .torch && .torch/bin/pip install torch==2.11.0 torchvision==0.26.0 \
      transformers onnx onnxscript
  .torch/bin/python scripts/export_onnx_fixtures.py [--out tests/data/onnx] [--only resnet18]

Published MACs these fixtures are checked against (tests/graph/real_models_onnx_test.cc):
ResNet-18 1.814G, ResNet-50 4.089G, ResNet-101 7.801G, MobileNetV2 0.301G,
EfficientNet-B0 0.386G, ViT-B/16 17.56G (torchvision model cards), BERT-base seq 128 11.17G.
"""
import argparse
import os
import sys
import tempfile

import onnx

torch = None  # imported in main() unless --small-only


def torchvision_model(name):
    import torchvision.models as tvm

    ctor = getattr(tvm, name)
    model = ctor(weights=None)
    return model.eval(), (torch.randn(1, 3, 224, 224),), ["input"], ["logits"], {
        "input": {0: "batch"}, "logits": {0: "batch"}}


def bert_base():
    from transformers import BertConfig, BertModel

    cfg = BertConfig()  # bert-base-uncased: 12 layers, hidden 768, 12 heads, ffn 3072
    try:
        model = BertModel(cfg, add_pooling_layer=False, attn_implementation="eager")
    except TypeError:
        cfg._attn_implementation = "eager"
        model = BertModel(cfg, add_pooling_layer=False)
    model.eval()

    class Wrapper(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask):
            return self.m(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    ids = torch.randint(0, cfg.vocab_size, (1, 128))
    mask = torch.ones(1, 128, dtype=torch.int64)
    axes = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"},
            "last_hidden_state": {0: "batch", 1: "seq"}}
    return Wrapper(model).eval(), (ids, mask), ["input_ids", "attention_mask"], [
        "last_hidden_state"], axes


MODELS = {
    "resnet18": lambda: torchvision_model("resnet18"),
    "resnet50": lambda: torchvision_model("resnet50"),
    "resnet101": lambda: torchvision_model("resnet101"),
    "mobilenet_v2": lambda: torchvision_model("mobilenet_v2"),
    "efficientnet_b0": lambda: torchvision_model("efficientnet_b0"),
    "vit_b_16": lambda: torchvision_model("vit_b_16"),
    "bert_base": bert_base,
}


def strip_weights(model, keep_elements=64):
    """Turns large initializers into references to a weights file that is never written."""
    offset = 0
    graphs = [model.graph]
    while graphs:
        g = graphs.pop()
        for t in g.initializer:
            n = 1
            for d in t.dims:
                n *= d
            if n <= keep_elements:
                continue
            elem = onnx.helper.tensor_dtype_to_np_dtype(t.data_type).itemsize
            length = n * elem
            for field in ("raw_data", "float_data", "int32_data", "int64_data", "double_data",
                          "uint64_data", "string_data"):
                t.ClearField(field)
            t.data_location = onnx.TensorProto.EXTERNAL
            del t.external_data[:]
            for k, v in (("location", "weights.bin"), ("offset", str(offset)),
                         ("length", str(length))):
                e = t.external_data.add()
                e.key, e.value = k, v
            offset += length
        for node in g.node:
            for a in node.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    graphs.append(a.g)
                elif a.type == onnx.AttributeProto.GRAPHS:
                    graphs.extend(a.graphs)
    return model


def export(name, out_dir):
    model, args, in_names, out_names, axes = MODELS[name]()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, name + ".onnx")
        with torch.no_grad():
            torch.onnx.export(model, args, path, input_names=in_names, output_names=out_names,
                              dynamic_axes=axes, opset_version=17, do_constant_folding=True,
                              dynamo=False)
        m = onnx.load(path, load_external_data=True)
    m = strip_weights(m)
    m.producer_name = "ftax scripts/export_onnx_fixtures.py (torch %s)" % torch.__version__
    dest = os.path.join(out_dir, name + ".onnx")
    onnx.save(m, dest)
    size = os.path.getsize(dest)
    print("%-16s %8d bytes  %5d nodes  %4d initializers" % (
        name, size, len(m.graph.node), len(m.graph.initializer)))
    if size > 2 * 1024 * 1024:
        print("warning: %s is over 2 MB" % dest, file=sys.stderr)


def small_fixtures(out_dir):
    """Tiny hand-built models and malformed files for the golden CLI and loader tests."""
    from onnx import TensorProto, helper

    def save(model, name):
        onnx.save(model, os.path.join(out_dir, name))

    def vi(name, shape, t=TensorProto.FLOAT):
        return helper.make_tensor_value_info(name, t, shape)

    def weight(name, dims):
        # Structure only: dims and dtype, no data.
        t = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=dims)
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", "missing_weights.bin"), ("offset", "0"), ("length", "0")):
            e = t.external_data.add()
            e.key, e.value = k, v
        return t

    opset = [helper.make_opsetid("", 17)]
    # An MLP with a symbolic batch and a weight shared by two MatMuls.
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"], name="fc1"),
             helper.make_node("Add", ["h", "b1"], ["hb"], name="bias1"),
             helper.make_node("Relu", ["hb"], ["r"], name="relu"),
             helper.make_node("MatMul", ["r", "w2"], ["h2"], name="fc2"),
             helper.make_node("MatMul", ["h2", "w2"], ["y"], name="fc3_shared")]
    g = helper.make_graph(nodes, "mlp", [vi("x", ["batch", 64])], [vi("y", ["batch", 32])],
                          [weight("w1", [64, 32]), weight("b1", [32]), weight("w2", [32, 32])])
    save(helper.make_model(g, opset_imports=opset, producer_name="ftax fixtures"), "tiny_mlp.onnx")

    # A conv net whose Reshape target is computed from Shape -> Gather -> Concat.
    shape_nodes = [
        helper.make_node("Conv", ["img", "cw", "cb"], ["c"], name="conv", kernel_shape=[3, 3],
                         pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Relu", ["c"], ["cr"], name="relu"),
        helper.make_node("Conv", ["cr", "dw"], ["d"], name="depthwise", kernel_shape=[3, 3],
                         pads=[1, 1, 1, 1], group=16),
        helper.make_node("GlobalAveragePool", ["d"], ["p"], name="pool"),
        helper.make_node("Shape", ["p"], ["ps"], name="shape"),
        helper.make_node("Gather", ["ps", "zero"], ["n"], name="batch_dim", axis=0),
        helper.make_node("Unsqueeze", ["n", "zero_axes"], ["n1"], name="unsq"),
        helper.make_node("Concat", ["n1", "minus_one"], ["target"], name="target", axis=0),
        helper.make_node("Reshape", ["p", "target"], ["flat"], name="flatten"),
        helper.make_node("Gemm", ["flat", "fw", "fb"], ["logits"], name="classifier", transB=1),
        helper.make_node("Softmax", ["logits"], ["prob"], name="softmax", axis=-1),
    ]
    inits = [weight("cw", [16, 3, 3, 3]), weight("cb", [16]), weight("dw", [16, 1, 3, 3]),
             weight("fw", [10, 16]), weight("fb", [10]),
             helper.make_tensor("zero", TensorProto.INT64, [], [0]),
             helper.make_tensor("zero_axes", TensorProto.INT64, [1], [0]),
             helper.make_tensor("minus_one", TensorProto.INT64, [1], [-1])]
    g = helper.make_graph(shape_nodes, "tiny_cnn", [vi("img", ["N", 3, 32, 32])],
                          [vi("prob", ["N", 10])], inits)
    save(helper.make_model(g, opset_imports=opset, producer_name="ftax fixtures"), "tiny_cnn.onnx")

    # Control flow: a constant-trip Loop around a MatMul, and an If on a graph input.
    body = helper.make_graph(
        [helper.make_node("MatMul", ["acc_in", "lw"], ["acc_out"], name="body_matmul"),
         helper.make_node("Identity", ["cond_in"], ["cond_out"], name="body_cond")],
        "body", [vi("i", [], TensorProto.INT64), vi("cond_in", [], TensorProto.BOOL),
                 vi("acc_in", [4, 8])],
        [vi("cond_out", [], TensorProto.BOOL), vi("acc_out", [4, 8])])
    then_g = helper.make_graph([helper.make_node("MatMul", ["looped", "lw"], ["t"], name="then_mm")],
                               "then", [], [vi("t", [4, 8])])
    else_g = helper.make_graph([helper.make_node("Relu", ["looped"], ["e"], name="else_relu")],
                               "else", [], [vi("e", [4, 8])])
    g = helper.make_graph(
        [helper.make_node("Loop", ["trips", "", "a"], ["looped"], name="loop", body=body),
         helper.make_node("If", ["flag"], ["out"], name="branch", then_branch=then_g,
                          else_branch=else_g)],
        "control_flow", [vi("a", [4, 8]), vi("flag", [], TensorProto.BOOL)], [vi("out", [4, 8])],
        [weight("lw", [8, 8]), helper.make_tensor("trips", TensorProto.INT64, [], [3])])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 16)],
                           producer_name="ftax fixtures"), "tiny_control_flow.onnx")

    # Malformed inputs.
    bad = os.path.join(out_dir, "bad")
    os.makedirs(bad, exist_ok=True)
    open(os.path.join(bad, "empty.onnx"), "wb").close()
    rnd = bytes((i * 1103515245 + 12345) >> 7 & 0xFF for i in range(4096))
    open(os.path.join(bad, "random.onnx"), "wb").write(rnd)
    full = open(os.path.join(out_dir, "tiny_cnn.onnx"), "rb").read()
    open(os.path.join(bad, "truncated.onnx"), "wb").write(full[: len(full) // 2])
    open(os.path.join(bad, "text.onnx"), "w").write("This is not a model.\nJust some text.\n")

    def bad_model(name, nodes, inputs, outputs, inits=()):
        g = helper.make_graph(nodes, name, inputs, outputs, list(inits))
        m = helper.make_model(g, opset_imports=opset)
        open(os.path.join(bad, name + ".onnx"), "wb").write(m.SerializeToString())

    bad_model("negative_dim", [helper.make_node("Relu", ["x"], ["y"], name="relu")],
              [vi("x", [1, -3])], [vi("y", [1, 3])])
    bad_model("cycle", [helper.make_node("Add", ["x", "b"], ["a"], name="add_a"),
                        helper.make_node("Relu", ["a"], ["b"], name="relu_b")],
              [vi("x", [2])], [vi("b", [2])])
    bad_model("dangling", [helper.make_node("Add", ["x", "nowhere"], ["y"], name="add")],
              [vi("x", [2])], [vi("y", [2])])
    bad_model("no_graph_field", [], [], [])
    # Overwrite the last one with a ModelProto lacking a graph (valid protobuf, not a model).
    m = onnx.ModelProto(ir_version=8)
    open(os.path.join(bad, "no_graph_field.onnx"), "wb").write(m.SerializeToString())
    for f in sorted(os.listdir(bad)):
        print("bad/%-20s %6d bytes" % (f, os.path.getsize(os.path.join(bad, f))))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "tests",
                                                  "data", "onnx"))
    ap.add_argument("--only", action="append", choices=sorted(MODELS))
    ap.add_argument("--small-only", action="store_true",
                    help="only the tiny hand-built models and malformed files (no torch needed)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    small_fixtures(a.out)
    if a.small_only:
        return
    global torch
    import torch as torch_module
    torch = torch_module
    torch.manual_seed(0)
    # nn.MultiheadAttention's fused fast path has no ONNX export; use the decomposed one.
    torch.backends.mha.set_fastpath_enabled(False)
    for name in a.only or MODELS:
        export(name, a.out)


if __name__ == "__main__":
    main()
