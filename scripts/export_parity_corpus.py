#!/usr/bin/env python3
"""Export the parity corpus: one model in every form ftax reads, structure only.

For each model (torchvision classifiers, and Hugging Face encoders and GPT-2 built from their
configs with random weights; nothing is downloaded) this writes, under tests/data/parity/:

  NAME.onnx         torch.onnx.export, TorchScript-based exporter, opset 17 (what Debian's
                    libonnx 1.12 knows), batch dim symbolic ("batch"), sequence fixed at 128
  NAME.dynamo.onnx  the dynamo exporter (opset 18), where it exports the model
  NAME.static.onnx  (swin_t only) the TorchScript-based exporter with every dim fixed
  NAME.pt           torch.jit.trace in eval mode under torch.no_grad(), as inference runs

Weights are stripped so the files stay small and inspect exactly like the full models:
- ONNX: every initializer of more than 64 elements becomes an external-data reference to a
  file that is never written ("weights.bin"); ftax reads only dims and dtypes, and keeps the
  small integer constants shape arithmetic needs.
- TorchScript: every parameter and buffer is replaced in place by a zero-stride view of one
  zero element (Tensor.set_ on an expanded 1-element tensor), so it keeps its dtype and sizes
  but its storage is one element; torch.jit.save writes that storage, not sizes x elements.
  LibTorch loads such a file like any other (strides are part of the format), and ftax reads
  only sizes and dtypes. The traced graph itself is unchanged. Each file is re-compressed
  without its *.debug_pkl records (source ranges for error messages, optional to LibTorch).

A manifest (corpus.json) records per model the inputs, the --input-shape flags for the .pt,
the --arch spec where a family fits, which forms were written, and why a form is missing.

Usage (torch 2.x with torchvision, transformers, onnx, onnxscript):
  python3 -m venv .torch && .torch/bin/pip install torch torchvision onnx onnxscript transformers
  .torch/bin/python scripts/export_parity_corpus.py [--only resnet18] [--no-dynamo]
"""
import argparse
import io
import json
import os
import sys
import tempfile
import traceback
import zipfile

import onnx
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "data", "parity")
SEQ = 128


def tv(name, **kw):
    def build():
        import torchvision.models as tvm

        m = getattr(tvm, name)(weights=None, **kw).eval()
        x = torch.randn(1, 3, 224, 224)
        return m, (x,), ["input"], ["logits"], {"input": {0: "batch"}, "logits": {0: "batch"}}
    return build


def hf(kind):
    def build():
        import transformers as T

        if kind == "bert":
            m = T.BertModel(T.BertConfig())
        elif kind == "roberta":
            m = T.RobertaModel(T.RobertaConfig(vocab_size=50265, max_position_embeddings=514,
                                               type_vocab_size=1, pad_token_id=1))
        elif kind == "distilbert":
            m = T.DistilBertModel(T.DistilBertConfig())
        elif kind == "gpt2":
            m = T.GPT2Model(T.GPT2Config(use_cache=False))
        m.eval()
        two = kind != "gpt2"

        class Wrapper(torch.nn.Module):
            def __init__(self, inner):
                super().__init__()
                self.m = inner

            def forward(self, input_ids, attention_mask):
                out = self.m(input_ids=input_ids, attention_mask=attention_mask)
                if kind == "bert":
                    return out.last_hidden_state, out.pooler_output
                return out.last_hidden_state

        class WrapperIds(torch.nn.Module):
            def __init__(self, inner):
                super().__init__()
                self.m = inner

            def forward(self, input_ids):
                return self.m(input_ids=input_ids, use_cache=False).last_hidden_state

        ids = torch.randint(0, 1000, (1, SEQ))
        mask = torch.ones(1, SEQ, dtype=torch.int64)
        outs = ["last_hidden_state"] + (["pooler_output"] if kind == "bert" else [])
        axes = {"input_ids": {0: "batch"}, "attention_mask": {0: "batch"}}
        for o in outs:
            axes[o] = {0: "batch"}
        if two:
            return Wrapper(m).eval(), (ids, mask), ["input_ids", "attention_mask"], outs, axes
        axes.pop("attention_mask")
        return WrapperIds(m).eval(), (ids,), ["input_ids"], outs, axes
    return build


# name -> (builder, --arch spec or None)
MODELS = {
    "resnet18": (tv("resnet18"), "resnet:depth=18"),
    "resnet50": (tv("resnet50"), "resnet:depth=50"),
    "resnet101": (tv("resnet101"), "resnet:depth=101"),
    "mobilenet_v2": (tv("mobilenet_v2"), "mobilenet"),
    "mobilenet_v3_small": (tv("mobilenet_v3_small"), None),
    "efficientnet_b0": (tv("efficientnet_b0"), None),
    "convnext_tiny": (tv("convnext_tiny"), None),
    "regnet_y_400mf": (tv("regnet_y_400mf"), None),
    "vit_b_16": (tv("vit_b_16"), "vit"),
    "swin_t": (tv("swin_t"), None),
    "bert_base": (hf("bert"), "bert"),
    "roberta_base": (hf("roberta"), None),
    "distilbert_base": (hf("distilbert"), None),
    "gpt2": (hf("gpt2"), "gpt"),
}


def strip_onnx(model, keep_elements=64):
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
            length = n * onnx.helper.tensor_dtype_to_np_dtype(t.data_type).itemsize
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
                if a.type == onnx.AttributeProto.TENSOR and node.op_type == "Constant":
                    t = a.t  # folded constants (Swin's attention masks): data dropped likewise
                    n = 1
                    for d in t.dims:
                        n *= d
                    if n > keep_elements:
                        length = n * onnx.helper.tensor_dtype_to_np_dtype(t.data_type).itemsize
                        for field in ("raw_data", "float_data", "int32_data", "int64_data",
                                      "double_data", "uint64_data", "string_data"):
                            t.ClearField(field)
                        t.data_location = onnx.TensorProto.EXTERNAL
                        del t.external_data[:]
                        for k, v in (("location", "weights.bin"), ("offset", str(offset)),
                                     ("length", str(length))):
                            e = t.external_data.add()
                            e.key, e.value = k, v
                        offset += length
                if a.type == onnx.AttributeProto.GRAPH:
                    graphs.append(a.g)
                elif a.type == onnx.AttributeProto.GRAPHS:
                    graphs.extend(a.graphs)
    return model


def export_onnx(model, args, names, outs, axes, path, dynamo, static=False):
    with tempfile.TemporaryDirectory() as tmp:
        p = os.path.join(tmp, "m.onnx")
        # Not under no_grad: nn.MultiheadAttention would take its inference fast path
        # (aten::_native_multi_head_attention), which has no ONNX form; the exporter writes the
        # module's general path instead (tests/graph/parity_corpus_test.cc says what differs).
        if True:
            if dynamo:
                torch.onnx.export(model, args, p, input_names=names, output_names=outs,
                                  dynamic_axes=axes, opset_version=18, dynamo=True,
                                  external_data=True)
            else:
                torch.onnx.export(model, args, p, input_names=names, output_names=outs,
                                  dynamic_axes=None if static else axes, opset_version=17,
                                  do_constant_folding=True, dynamo=False)
        m = onnx.load(p, load_external_data=True)
    m = strip_onnx(m)
    # The dynamo exporter annotates every node with stack traces: drop them (structure only).
    graphs = [m.graph]
    while graphs:
        g = graphs.pop()
        g.doc_string = ""
        for node in g.node:
            node.doc_string = ""
            del node.metadata_props[:]
            for at in node.attribute:
                if at.type == onnx.AttributeProto.GRAPH:
                    graphs.append(at.g)
    del m.metadata_props[:]
    m.producer_name = "ftax scripts/export_parity_corpus.py (torch %s%s)" % (
        torch.__version__, ", dynamo" if dynamo else "")
    onnx.save(m, path)


def strip_torchscript(traced):
    """Every parameter and buffer becomes a zero-stride view of one zero (see the docstring)."""
    with torch.no_grad():
        for t in list(traced.parameters()) + list(traced.buffers()):
            if t.numel() <= 1:
                continue
            t.set_(torch.zeros(1, dtype=t.dtype).expand(t.shape))


def recompress(path):
    buf = io.BytesIO()
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            if info.filename.endswith(".debug_pkl"):
                continue  # source ranges for error messages; LibTorch loads without them
            data = src.read(info.filename)
            zi = zipfile.ZipInfo(info.filename, date_time=(1980, 1, 1, 0, 0, 0))
            zi.compress_type = zipfile.ZIP_DEFLATED
            dst.writestr(zi, data)
    with open(path, "wb") as f:
        f.write(buf.getvalue())


def export_pt(model, args, path):
    with torch.no_grad():
        traced = torch.jit.trace(model, args, check_trace=False, strict=False)
    strip_torchscript(traced)
    torch.jit.save(traced, path)
    recompress(path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--only", action="append", choices=sorted(MODELS))
    ap.add_argument("--no-dynamo", action="store_true")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    torch.manual_seed(0)
    manifest_path = os.path.join(a.out, "corpus.json")
    manifest = {}
    if os.path.exists(manifest_path):
        manifest = json.load(open(manifest_path))
    for name in a.only or list(MODELS):
        build, arch = MODELS[name]
        model, args, names, outs, axes = build()
        entry = {"inputs": {}, "input_shapes": [], "arch": arch, "forms": {}, "missing": {},
                 "torch": torch.__version__}
        import inspect
        forward_args = list(inspect.signature(model.forward).parameters)
        entry["pt_input_shapes"] = []
        for n, pt_name, x in zip(names, forward_args, args):
            shape = "x".join(str(d) for d in x.shape)
            entry["inputs"][n] = shape
            entry["input_shapes"].append("%s=%s" % (n, shape))
            entry["pt_input_shapes"].append("%s=%s" % (pt_name, shape))
        forms = [("onnx", lambda p: export_onnx(model, args, names, outs, axes, p, False)),
                 ("pt", lambda p: export_pt(model, args, p))]
        if name == "swin_t":
            forms.append(("static.onnx",
                          lambda p: export_onnx(model, args, names, outs, axes, p, False, True)))
        if not a.no_dynamo:
            forms.append(("dynamo.onnx",
                          lambda p: export_onnx(model, args, names, outs, axes, p, True)))
        for form, fn in forms:
            path = os.path.join(a.out, "%s.%s" % (name, form))
            try:
                fn(path)
                entry["forms"][form] = os.path.basename(path)
                print("%-20s %-12s %9d bytes" % (name, form, os.path.getsize(path)), flush=True)
            except Exception as e:  # recorded, never dropped silently
                if os.path.exists(path):
                    os.remove(path)
                why = "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")
                entry["missing"][form] = why[:300]
                print("%-20s %-12s FAILED %s" % (name, form, why[:200]), flush=True)
                traceback.print_exc(limit=2, file=sys.stderr)
        manifest[name] = entry
        with open(manifest_path, "w") as f:
            json.dump(manifest, f, indent=1, sort_keys=True)
            f.write("\n")


if __name__ == "__main__":
    main()
