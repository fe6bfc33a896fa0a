#!/usr/bin/env python3
"""Export the parity corpus: one model in every form ftax reads, structure only, xz-compressed.

The models are the model zoo's (scripts/model_zoo.py builds them: torchvision, timm and Hugging
Face architectures from configs with random weights; nothing is downloaded) and the torchvision
classification models outside the zoo (torchvision.models.list_models). Each is exported with
model_zoo.inputs() at batch 2 (text at sequence 128; see EXPORT_BATCH) into tests/data/parity/ as

  NAME.onnx.xz         torch.onnx.export, TorchScript-based exporter, opset 17 (what Debian's
                       libonnx 1.12 knows), batch dim symbolic ("batch")
  NAME.dynamo.onnx.xz  the dynamo exporter (opset 18), where it exports the model
  NAME.static.onnx.xz  (swin_t only) the TorchScript-based exporter with every dim fixed
  NAME.pt.xz           torch.jit.trace in eval mode under torch.no_grad(), as inference runs

Every form's inputs carry the same names (forward's parameter names; input_ids and
past_L_k/past_L_v for the decode steps, whose forward takes *kv), so one set of
--input-shape flags serves all of them.

Weights are stripped so the files stay small and inspect exactly like the full models:
- ONNX: every initializer of more than 64 elements becomes an external-data reference to a
  file that is never written ("weights.bin"); ftax reads only dims and dtypes, and keeps the
  small integer constants shape arithmetic needs.
- TorchScript: every parameter and buffer is replaced in place by a zero-stride view of one
  zero element (Tensor.set_ on an expanded 1-element tensor), so it keeps its dtype and sizes
  but its storage is one element; torch.jit.save writes that storage, not sizes x elements.
  LibTorch loads such a file like any other (strides are part of the format), and ftax reads
  only sizes and dtypes. The traced graph itself is unchanged. Each file is rewritten as a
  stored (uncompressed) zip without its *.debug_pkl records (source ranges for error messages,
  optional to LibTorch), so that xz sees the code and compresses it well.
Each file is then compressed with xz (preset 9e, one .xz per file: about 8x smaller than the
raw files); tests/cli/parity_corpus_torch_test.cc unpacks a model's files into a temporary
directory.

A manifest (corpus.json) records per model where it comes from, the inputs and their
--input-shape flags, the --arch spec where a family fits, which forms were written, how long
each took, and why a form is missing (the exporter's error): a model is never dropped.

Usage (torch 2.x with torchvision, timm, transformers, onnx, onnxscript):
  python3 -m venv .torch && .torch/bin/pip install torch torchvision timm onnx onnxscript transformers
  .torch/bin/python scripts/export_parity_corpus.py [--only resnet18] [--no-dynamo] [--list]
The machine this was made on had 2 cores: export one model per process
  for m in $(.torch/bin/python scripts/export_parity_corpus.py --list); do
    timeout 1800 .torch/bin/python scripts/export_parity_corpus.py --only $m; done
"""
import argparse
import copy
import inspect
import io
import json
import lzma
import os
import re
import sys
import tempfile
import time
import traceback
import zipfile

import onnx
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import model_zoo  # noqa: E402

OUT = os.path.join(HERE, "..", "tests", "data", "parity")
SEQ = 128
# Every form is exported with example inputs of batch 2, as the zoo's traces are
# (export_torchscript.py --trace-batch): torch.export specializes a dim whose example is 1, so
# at batch 1 the dynamo exporter writes files whose symbolic batch only some nodes honour (ViT:
# reshapes to 50x1x3x768 past the first layer; BERT: 12 // batch heads). The manifest's shapes
# are at batch 1, as ftax is asked for them.
EXPORT_BATCH = 2


def extra_torchvision():
    """torchvision's classification models that the zoo does not hold, in its own order."""
    import torchvision
    return [n for n in torchvision.models.list_models(module=torchvision.models) if n not in model_zoo.ZOO]


def all_models():
    return list(model_zoo.ZOO) + extra_torchvision()


def build(name):
    """(module, example inputs, input names, source) for a zoo model or a torchvision one."""
    if name in model_zoo.ZOO:
        model = model_zoo.build(name)
        args = model_zoo.inputs(name, EXPORT_BATCH, SEQ, "cpu")
        source = "zoo"
    else:
        import torchvision
        model = torchvision.models.get_model(name, weights=None).eval()
        args = (torch.randn(EXPORT_BATCH, 3, 224, 224),)
        source = "torchvision"
    params = [p for p in inspect.signature(model.forward).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(params) >= len(args):
        names = [p.name for p in params[:len(args)]]
    else:  # a decode step: forward(ids, *kv), the cache of every layer as a key and a value
        names = ["input_ids"] + ["past_%d_%s" % (i // 2, "kv"[i % 2]) for i in range(len(args) - 1)]
    return model, args, names, source


def strip_tensor(t, offset):
    n = 1
    for d in t.dims:
        n *= d
    length = n * onnx.helper.tensor_dtype_to_np_dtype(t.data_type).itemsize
    for field in ("raw_data", "float_data", "int32_data", "int64_data", "double_data",
                  "uint64_data", "string_data"):
        t.ClearField(field)
    t.data_location = onnx.TensorProto.EXTERNAL
    del t.external_data[:]
    for k, v in (("location", "weights.bin"), ("offset", str(offset)), ("length", str(length))):
        e = t.external_data.add()
        e.key, e.value = k, v
    return offset + length


def elements(t):
    n = 1
    for d in t.dims:
        n *= d
    return n


def strip_onnx(model, keep_elements=64):
    """Turns large initializers (and large folded Constants, such as Swin's attention masks)
    into references to a weights file that is never written."""
    offset = 0
    graphs = [model.graph]
    while graphs:
        g = graphs.pop()
        for t in g.initializer:
            if elements(t) > keep_elements:
                offset = strip_tensor(t, offset)
        for node in g.node:
            for a in node.attribute:
                if a.type == onnx.AttributeProto.TENSOR and node.op_type == "Constant":
                    if elements(a.t) > keep_elements:
                        offset = strip_tensor(a.t, offset)
                if a.type == onnx.AttributeProto.GRAPH:
                    graphs.append(a.g)
                elif a.type == onnx.AttributeProto.GRAPHS:
                    graphs.extend(a.graphs)
    return model


class Positional(torch.nn.Module):
    """forward(*xs) -> inner(*xs): the TorchScript-based exporter calls a Hugging Face model's
    forward with keyword arguments of its own (use_cache) that collide with the config's."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, *xs):
        return self.inner(*xs)


def export_onnx(model, args, names, path, dynamo, static=False):
    if not dynamo:  # the dynamo exporter maps dynamic axes to forward's parameters by name
        model = Positional(model).eval()
    with torch.no_grad():
        flat = torch.utils._pytree.tree_leaves(model(*args))
    outs = ["output_%d" % i for i in range(len(flat))]
    axes = {n: {0: "batch"} for n in names + outs}
    with tempfile.TemporaryDirectory() as tmp:
        p = os.path.join(tmp, "m.onnx")
        # Not under no_grad: nn.MultiheadAttention would take its inference fast path
        # (aten::_native_multi_head_attention), which has no ONNX form; the exporter writes the
        # module's general path instead (the parity test names what differs).
        if dynamo:
            params = [q for q in inspect.signature(model.forward).parameters.values()]
            if params and params[-1].kind == params[-1].VAR_POSITIONAL:
                # forward(ids, *kv): dynamic_axes cannot name the tensors of *kv; torch.export's
                # dynamic_shapes gives the batch dim of each.
                batch = torch.export.Dim("batch")
                fixed = len(params) - 1
                shapes = tuple({0: batch} for _ in args[:fixed]) + (tuple({0: batch} for _ in args[fixed:]),)
                torch.onnx.export(model, args, p, input_names=names, output_names=outs,
                                  dynamic_shapes=shapes, opset_version=18, dynamo=True,
                                  external_data=True)
            else:
                torch.onnx.export(model, args, p, input_names=names, output_names=outs,
                                  dynamic_axes=axes, opset_version=18, dynamo=True, external_data=True)
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
                elif at.type == onnx.AttributeProto.GRAPHS:
                    graphs.extend(at.graphs)
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


def restore_zip(path):
    """Rewrites a torch.jit.save zip as stored entries, without *.debug_pkl, fixed dates."""
    buf = io.BytesIO()
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            if info.filename.endswith(".debug_pkl"):
                continue  # source ranges for error messages; LibTorch loads without them
            zi = zipfile.ZipInfo(info.filename, date_time=(1980, 1, 1, 0, 0, 0))
            zi.compress_type = zipfile.ZIP_STORED
            dst.writestr(zi, src.read(info.filename))
    with open(path, "wb") as f:
        f.write(buf.getvalue())


def export_pt(model, args, names, path):
    # A trace shares the model's tensors, and stripping zeroes them in place: trace a copy, so
    # the ONNX forms exported after it see the model's own weights (the corpus committed with
    # the parity test's kSharedState was exported from the zeroed ones).
    with torch.no_grad():
        traced = torch.jit.trace(copy.deepcopy(model), args, check_trace=False, strict=False)
    # The trace names its inputs after the variables inside forward (a decode step's *kv
    # become key_states.1, key_states.3, ...): give them the ONNX forms' names.
    for v, n in zip(list(traced.graph.inputs())[1:], names):
        v.setDebugName(n)
    strip_torchscript(traced)
    torch.jit.save(traced, path)
    restore_zip(path)


def xz(path):
    with open(path, "rb") as f:
        data = f.read()
    with open(path + ".xz", "wb") as f:
        f.write(lzma.compress(data, preset=9 | lzma.PRESET_EXTREME))
    os.remove(path)
    return len(data)


def reason(e):
    """The first line of the innermost error (torch.export's, under the ONNX exporter's)."""
    while e.__cause__ is not None:
        e = e.__cause__
    msg = re.sub(r"\x1b\[[0-9;]*m", "", str(e)).strip().splitlines()
    return "%s: %s" % (type(e).__name__, msg[0] if msg else "")


def export_model(name, out, dynamo, only_forms=None):
    t0 = time.time()
    model, args, names, source = build(name)
    arch = (model_zoo.ZOO[name][0] or None) if name in model_zoo.ZOO else None
    entry = {"source": source, "inputs": {}, "input_shapes": [], "export_batch": EXPORT_BATCH,
             "arch": arch, "forms": {},
             "missing": {}, "seconds": {"build": round(time.time() - t0, 1)}, "bytes": {},
             "torch": torch.__version__}
    if source == "zoo":
        entry["split"] = "calibration" if name in model_zoo.CALIBRATION else "evaluation"
        entry["family"] = model_zoo.family(name)
    for n, x in zip(names, args):
        shape = "x".join(str(d) for d in (1,) + tuple(x.shape[1:]))
        entry["inputs"][n] = shape
        entry["input_shapes"].append("%s=%s" % (n, shape))
    forms = [("pt", lambda p: export_pt(model, args, names, p)),
             ("onnx", lambda p: export_onnx(model, args, names, p, False))]
    if name == "swin_t":
        forms.append(("static.onnx", lambda p: export_onnx(model, args, names, p, False, True)))
    if dynamo:
        forms.append(("dynamo.onnx", lambda p: export_onnx(model, args, names, p, True)))
    for form, fn in forms:
        if only_forms and form not in only_forms:
            continue
        path = os.path.join(out, "%s.%s" % (name, form))
        t = time.time()
        try:
            fn(path)
            raw = xz(path)
            entry["forms"][form] = os.path.basename(path) + ".xz"
            entry["bytes"][form] = raw
            print("%-24s %-12s %9d bytes, %7d as .xz, %6.1f s" % (
                name, form, raw, os.path.getsize(path + ".xz"), time.time() - t), flush=True)
        except Exception as e:  # recorded, never dropped silently
            for p in (path, path + ".xz"):
                if os.path.exists(p):
                    os.remove(p)
            why = reason(e)
            entry["missing"][form] = why[:300]
            print("%-24s %-12s FAILED %s" % (name, form, why[:200]), flush=True)
            traceback.print_exc(limit=2, file=sys.stderr)
        entry["seconds"][form] = round(time.time() - t, 1)
    return entry


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--only", action="append", help="a model (repeatable; default: all)")
    ap.add_argument("--no-dynamo", action="store_true")
    ap.add_argument("--forms", help="comma list of forms to write (pt, onnx, dynamo.onnx, static.onnx); "
                    "the model's other forms stay as the manifest has them")
    ap.add_argument("--list", action="store_true", help="print the models' names and exit")
    a = ap.parse_args()
    names = all_models()
    if a.list:
        print("\n".join(names))
        return 0
    for n in a.only or []:
        if n not in names:
            ap.error("unknown model '%s'" % n)
    os.makedirs(a.out, exist_ok=True)
    manifest_path = os.path.join(a.out, "corpus.json")
    for name in a.only or names:
        torch.manual_seed(0)
        only_forms = a.forms.split(",") if a.forms else None
        entry = export_model(name, a.out, not a.no_dynamo, only_forms)
        manifest = {}
        if os.path.exists(manifest_path):  # re-read: another process may have added a model
            with open(manifest_path) as f:
                manifest = json.load(f)
        old = manifest.get(name)
        if only_forms and old:  # keep what this run did not write
            for key in ("forms", "missing", "seconds", "bytes"):
                for form, v in old.get(key, {}).items():
                    if form not in only_forms:
                        entry[key].setdefault(form, v)
        manifest[name] = entry
        with open(manifest_path + ".tmp", "w") as f:
            json.dump(manifest, f, indent=1, sort_keys=True)
            f.write("\n")
        os.replace(manifest_path + ".tmp", manifest_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
