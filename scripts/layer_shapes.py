#!/usr/bin/env python3
"""Write the layer shapes `ftax bench` times: the convolutions, poolings and layer norms of the
calibration models, as their layers run them.

ftax prices a kernel from the measured points ("anchors") nearest to it. The bench's own grids
cover plain convolutions well and grouped, depthwise, large-kernel, patchify and pooling
kernels hardly at all, so a new model's layers of those kinds fell outside anything measured.
This script reads the calibration models of the zoo's fixed split (data/zoo/split.json; never
an evaluation model) from the structure-only ONNX files of the parity corpus
(tests/data/parity/NAME.onnx.xz), binds their inputs at batch 1, runs ONNX shape inference and
keeps every Conv, MaxPool and AveragePool node's geometry (channels, spatial size, kernel,
stride, padding, dilation, groups), one row per distinct geometry with the models it came from.
A convolution that reads a channels-last tensor (ConvNeXt's permute back to NCHW, followed
through elementwise ops as src/predictor/lowering.cc does) is marked "layout": "nhwc". The
layer norms ("layer_norms": positions per sample and width) come from ftax's own shape
inference (`ftax inspect --by-node`, the binary given by --ftax), since ONNX's stops at the
position-id slices of BERT-like exports.
Two small grids are added: patchify convolutions (an image of 3 channels cut into patches:
kernel equal to stride, the patch embedding of vision transformers and ConvNeXt's stem), since
each model has one such layer and its width varies, grouped 3x3 convolutions of 4 to 64
channels a group at 128 to 1024 channels (56 down to 7 pixels), since the calibration models'
grouped layers all have 8, and of 24 and 48 channels a group at 96 to 768 channels (cuDNN
adds a generic weight transform, about 9 us a call on an H200, for widths that are not a power
of two: RegNetX-1.6GF's 24, host run bi's CUPTI records), and grouped 1x1
convolutions (2, 4 or 8 groups, 1-D over 128 positions and 2-D), which no calibration model has:
cuDNN runs some of them group by group, a layout transpose, a kernel and a transpose back each
(validation/scripts/grouped_conv_kernels.py), so a model built of them launches several times
the kernels its layer count says, and only a measured point can tell how many. A last grid
holds 1x1 convolutions over odd positions per image (15x15, 31x31, 63x63; the calibration
models have them only at 7x7): the GEMM's rows are then aligned to one element and the library
runs slower kernels (CUPTI, H200: cutlass align1 GEMMs), so they are their own variant,
pointwise_odd. Last, every dense, 1x1, grouped 3x3 and depthwise convolution is copied with its
input and weights channels-last ("layout": "nhwc", "weights": "nhwc"), as torch.compile hands them to the
library, which then runs other kernels (compiled_copies).

`ftax bench` reads the file (data/zoo/layer-shapes.json, found beside the binary once
installed) and times every row at batch 1, 8 and 64 (kernel rows labelled "layer ...").

Usage (needs the `onnx` Python package and a built ftax; run from the checkout):
  python3 scripts/layer_shapes.py [-o data/zoo/layer-shapes.json] [--max-conv 160] [--ftax build/ftax]
  python3 scripts/layer_shapes.py --restate IN.json OUT.json   (layer rows of an older bench)
"""
import argparse
import json
import lzma
import os
import re
import sys

try:
    import onnx
    from onnx import shape_inference
except ImportError:  # only making the file needs it (--restate does not)
    onnx = None

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Patch embeddings beyond the calibration models' own: patch size x (channels in, channels out)
# at a 224 px image, so that a model's patchify layer lies within an octave of measured ones.
# Grouped 3x3 convolutions beyond the calibration models' own (RegNet-Y's 8 channels a group):
# channels per group x (channels, spatial size), as ResNeXt- and RegNet-style stages have them.
GROUPED_GRID = [(gw, c, hw) for gw in (4, 16, 32, 64) for c, hw in ((128, 56), (256, 28), (512, 14), (1024, 7))]
# Group widths that are not a power of two (RegNet's design space steps them by 8): cuDNN runs
# them through other kernels, a generic weight transform among them, at stage sizes divisible
# by 24 and 48.
GROUPED_GRID += [(gw, c, hw) for gw in (24, 48) for c, hw in ((96, 56), (192, 28), (384, 14), (768, 7))]
# Grouped 1x1 convolutions: groups x (channels in, channels out, spatial size), 1-D over 128
# positions (a sequence model's layers) and 2-D, square and widening or narrowing 4x.
GROUPED_POINTWISE_GRID = ([(g, cin, cout, [128]) for g in (2, 4, 8)
                           for cin, cout in ((256, 256), (1024, 1024), (512, 2048), (2048, 512))] +
                          [(g, c, c, [hw, hw]) for g in (2, 4, 8) for c, hw in ((128, 28), (256, 14))])
# 1x1 convolutions over odd positions per image (images cut by unpadded stride-2 layers, as
# 299- and 227-pixel inputs are): the GEMM's rows are aligned to one element and the library
# runs other kernels. Calibration models have them only at 7x7; channels in -> out, size.
ODD_POINTWISE_GRID = [(cin, cout, hw) for hw in (15, 31) for cin, cout in ((128, 64), (256, 128), (512, 256))] + \
                     [(cin, cout, 63) for cin, cout in ((64, 64), (128, 32))]
PATCH_GRID = [(4, 3, 96), (4, 3, 128), (4, 3, 192), (8, 3, 384), (14, 3, 768), (14, 3, 1024),
              (16, 3, 192), (16, 3, 384), (16, 3, 768), (16, 3, 1024), (32, 3, 768), (32, 3, 1024)]


def dims_of(vi):
    return [d.dim_value if d.HasField("dim_value") else None for d in vi.type.tensor_type.shape.dim]


def bind_inputs(model, shapes):
    """Fix the graph inputs' dims to the corpus's --input-shape values (batch 1)."""
    for inp in model.graph.input:
        if inp.name not in shapes:
            continue
        want = [int(x) for x in shapes[inp.name].split("x")]
        dims = inp.type.tensor_type.shape.dim
        if len(dims) != len(want):
            continue
        for d, v in zip(dims, want):
            d.ClearField("dim_param")
            d.dim_value = v


def attr(node, name, default):
    for a in node.attribute:
        if a.name == name:
            if a.type == onnx.AttributeProto.INTS:
                return list(a.ints)
            if a.type == onnx.AttributeProto.INT:
                return a.i
            if a.type == onnx.AttributeProto.STRING:
                return a.s.decode()
    return default


# Ops over which a channels-last input makes a channels-last output: elementwise ones (ATen's
# TensorIterator follows its inputs' strides) and the layers (cuDNN writes what it reads).
KEEPS_CHANNELS_LAST = {"Add", "Sub", "Mul", "Div", "Relu", "Sigmoid", "Tanh", "Erf", "Clip", "HardSigmoid",
                       "HardSwish", "Neg", "Pow", "Sqrt", "Conv", "MaxPool", "AveragePool"}


def track_channels_last(node, known, channels_last):
    """ConvNeXt's permute(0, 3, 1, 2) (an ONNX Transpose) leaves NCHW sizes over NHWC memory;
    PyTorch then runs the convolutions that read it with cuDNN's NHWC kernels. Mirrors
    TrackChannelsLast in src/predictor/lowering.cc."""
    if not node.input or not node.output:
        return
    out = node.output[0]
    if node.op_type == "Transpose":
        if attr(node, "perm", []) == [0, 3, 1, 2] and node.input[0] not in channels_last:
            channels_last.add(out)
        return
    if node.op_type not in KEEPS_CHANNELS_LAST:
        return
    o = known.get(out)
    if not o or len(o) != 4:
        return
    ins = node.input if node.op_type not in ("Conv", "MaxPool", "AveragePool") else node.input[:1]
    for i in ins:
        if i in channels_last and (node.op_type in ("Conv", "MaxPool", "AveragePool") or known.get(i) == o):
            channels_last.add(out)
            return


def layers_of(name, path, shapes):
    model = onnx.load_from_string(lzma.open(path).read())
    bind_inputs(model, shapes)
    try:
        model = shape_inference.infer_shapes(model, strict_mode=False, data_prop=True)
    except Exception as e:  # noqa: BLE001 - the model is reported, never dropped silently
        print(f"{name}: shape inference failed: {e}", file=sys.stderr)
        return [], 1
    known = {}
    for vi in list(model.graph.value_info) + list(model.graph.input) + list(model.graph.output):
        known[vi.name] = dims_of(vi)
    for init in model.graph.initializer:
        known[init.name] = list(init.dims)
    rows, unresolved = [], 0
    channels_last = set()  # 4-D tensors in NHWC memory, as PyTorch runs the model (lowering.cc)
    for node in model.graph.node:
        track_channels_last(node, known, channels_last)
        if node.op_type not in ("Conv", "MaxPool", "AveragePool"):
            continue
        x = known.get(node.input[0])
        if not x or any(v is None for v in x) or len(x) not in (3, 4):
            unresolved += 1
            continue
        nd = len(x) - 2
        spatial = x[2:]
        if node.op_type == "Conv":
            w = known.get(node.input[1])
            if not w or any(v is None for v in w):
                unresolved += 1
                continue
            kernel = list(w[2:])
            row = {"op": "conv", "cin": x[1], "cout": w[0], "groups": attr(node, "group", 1)}
        else:
            kernel = attr(node, "kernel_shape", [1] * nd)
            row = {"op": "max_pool" if node.op_type == "MaxPool" else "avg_pool", "cin": x[1],
                   "cout": x[1], "groups": 1}
            if attr(node, "ceil_mode", 0):
                row["ceil_mode"] = True
        pads = attr(node, "pads", [0] * (2 * nd))
        if attr(node, "auto_pad", "NOTSET") not in ("NOTSET", ""):
            unresolved += 1
            continue
        row.update({"spatial": spatial, "kernel": kernel, "stride": attr(node, "strides", [1] * nd),
                    "pad": pads[:nd], "dilation": attr(node, "dilations", [1] * nd)})
        if pads[:nd] != pads[nd:]:
            row["pad_end"] = pads[nd:]
        if node.op_type == "Conv" and node.input[0] in channels_last:
            row["layout"] = "nhwc"
        rows.append(row)
    return rows, unresolved


def layer_norms_of(name, path, shapes, ftax):
    """The model's layer norms, (positions, hidden) at batch 1, from ftax's own shape inference
    (`ftax inspect --by-node`: ONNX's stops at the position-id slices of BERT-like exports):
    the LayerNormalization nodes' output shapes, normalized over the last dim."""
    import subprocess
    import tempfile
    with tempfile.NamedTemporaryFile(suffix=".onnx") as f:
        f.write(lzma.open(path).read())
        f.flush()
        cmd = [ftax, "inspect", f.name, "--by-node", "--format", "json", "--allow-unbound"]
        for k, v in sorted(shapes.items()):
            cmd += ["--input-shape", f"{k}={v}"]
        r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print(f"{name}: ftax inspect failed: {r.stderr.strip()[:300]}", file=sys.stderr)
        return [], 1
    norms, unresolved = [], 0
    for node in json.loads(r.stdout)["nodes"]:
        if node["op_type"] != "LayerNormalization":
            continue
        try:
            dims = [int(v) for v in node["output_shape"].split("x")]
        except ValueError:
            unresolved += 1
            continue
        positions = 1
        for v in dims[1:-1]:
            positions *= v
        norms.append({"positions": positions, "hidden": dims[-1]})
    return norms, unresolved


def compiled_copies(rows):
    """The convolutions as torch.compile runs them: Inductor makes every 2-D convolution's input
    and weights channels-last and calls the library with both (src/predictor/lowering.cc), where
    cuDNN picks other kernels than for NCHW: a 1x1 layer becomes one cuBLASLt GEMM, a 3x3 one
    an NHWC implicit GEMM without layout transposes (CUPTI, H100, ResNet-101 under
    torch.compile: 3x3 layers 2.7x faster than the NCHW calls the rows above time), and a
    depthwise one cuDNN's NHWC depthwise kernel (CUPTI, H200 host run ce, MobileNetV3-Small
    under reduce-overhead: conv2d_c1_k1_nhwc, 4.8 us a layer at batch 1, where its Python eager
    NCHW kernel took 2.4). One copy, "layout": "nhwc" and "weights": "nhwc", of each dense, 1x1,
    grouped 3x3 and depthwise row (grids included); patchify layers keep their own variant
    under torch.compile."""
    out = []
    for r in rows:
        if r["op"] != "conv" or r.get("layout") == "nhwc" or len(r["spatial"]) != 2:
            continue
        k = kind(r)
        if k not in ("dense", "pointwise", "grouped", "depthwise", "depthwise_large") or (
                k == "grouped" and max(r["kernel"]) == 1):
            continue
        c = {f: v for f, v in r.items() if f not in ("models", "count", "grid", "kind")}
        # Batches 1 and 8 (reaching batch 16): these 177 rows at three batches would add about
        # a fifth to the bench's time.
        c.update({"layout": "nhwc", "weights": "nhwc", "batches": [1, 8]})
        c.update({"models": r.get("models", []), "count": r.get("count", 0), "kind": k})
        if r.get("grid"):
            c["grid"] = True
        out.append(c)
    return out


def key(row):
    return json.dumps({k: v for k, v in row.items() if k not in ("models", "count")}, sort_keys=True)


def kind(row):
    """The family a row stands for, used to keep every kind when the conv rows are capped."""
    if row["op"] != "conv":
        return row["op"]
    k = row["kernel"]
    if row["groups"] > 1 and row["groups"] == row["cin"]:
        return "depthwise" if max(k) <= 3 else "depthwise_large"
    if row["groups"] > 1:
        return "grouped"
    if k == row["stride"] and max(k) > 1 and row["cin"] <= 4:
        return "patchify"
    return "pointwise" if max(k) == 1 else "dense"


LABEL = re.compile(r"^layer (conv|max_pool|avg_pool) n(\d+) (\d+)->(\d+) ([\dx]+) k([\dx]+) s([\dx]+) p([\dx]+)"
                   r"(?: d([\dx]+))? g(\d+)( ceil)?( nhwc)?( w-nhwc)?$")


def ints(text):
    return [int(v) for v in text.split("x")]


NORM_LABEL = re.compile(r"^layer layer_norm n(\d+) (\d+)x(\d+)$")


def layer_work(label, elem_size):
    """The work fields `ftax bench` writes for a layer row today (src/calibrate/layer_shapes.cc,
    LayerKernelWork and NormKernelWork), from the row's label: (class, fields)."""
    m = NORM_LABEL.match(label)
    if m:
        n, positions, hidden = int(m.group(1)), int(m.group(2)), int(m.group(3))
        e = n * positions * hidden
        return "norm", {"flops": 5.0 * e, "bytes": float((2 * e + 2 * hidden) * elem_size), "m": n * positions,
                        "n": hidden, "k": 1, "batch": 1, "variant": "layer_norm"}
    m = LABEL.match(label)
    if not m:
        return None
    op, n, cin, cout = m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4))
    spatial, kernel, stride, pad = ints(m.group(5)), ints(m.group(6)), ints(m.group(7)), ints(m.group(8))
    dil = ints(m.group(9)) if m.group(9) else [1] * len(spatial)
    groups, ceil, nhwc, w_nhwc = int(m.group(10)), bool(m.group(11)), bool(m.group(12)), bool(m.group(13))
    out = []
    for i in range(len(spatial)):
        span = spatial[i] + 2 * pad[i] - dil[i] * (kernel[i] - 1) - 1
        o = ((span + stride[i] - 1) // stride[i] if ceil else span // stride[i]) + 1
        if ceil and (o - 1) * stride[i] >= spatial[i] + pad[i]:
            o -= 1
        out.append(o)
    prod = lambda v: eval("*".join(map(str, v)) or "1")  # noqa: E731
    in_e, out_e = n * cin * prod(spatial), n * cout * prod(out)
    if op != "conv":
        return "reduction", {"flops": 5.0 * out_e, "bytes": float((in_e + out_e) * elem_size), "variant": "pool"}
    cin_g, ka = cin // groups, prod(kernel)
    mm, nn, kk = n * prod(out), cout // groups, cin_g * ka
    w = {"flops": 2.0 * mm * nn * kk * groups, "bytes": float((in_e + cout * cin_g * ka + out_e) * elem_size)}
    if groups > 1 and cin_g == 1 and groups == cin:
        if ka > 9 or nhwc:
            w.update({"m": mm, "n": cout, "k": ka, "batch": 1, "variant": "nhwc" if nhwc else "large_kernel"})
        else:
            w.update({"m": 0, "n": 0, "k": 0, "batch": 1})
        return "depthwise", w
    w.update({"m": mm, "n": nn, "k": kk, "batch": groups})
    if nhwc and w_nhwc and ka == 1 and groups == 1:
        w["variant"] = "pointwise_nhwc"
    elif nhwc:
        # a grouped width that is not a power of two gets cuDNN's layout transforms here too
        w["variant"] = "nhwc_grouped_non_pow2" if groups > 1 and nn & (nn - 1) else "nhwc"
    elif groups > 1:
        # cuDNN runs widths that are not a power of two (24, 48) with a weight transform
        w["variant"] = "grouped" if nn & (nn - 1) == 0 else "grouped_non_pow2"
    elif ka == 1 and prod(out) > 1 and prod(out) % 2 == 1:
        w.update({"m": prod(out), "batch": n, "variant": "pointwise_odd"})  # one GEMM per image
    elif ka == 1:
        w["variant"] = "pointwise"
    elif ka > 1 and cin_g <= 4 and kernel == stride and min(kernel) > 1:
        w["variant"] = "patchify"
    return "conv", w


def restate(src, dst):
    """Rewrite the work fields of a measurement file's layer rows as the bench writes them now
    (a file measured by an earlier bench: its times are kept, only the description of the work
    changes). Checks first that the fields this script recomputes equal the file's FLOPs and
    bytes, so a label it misreads stops it."""
    doc = json.load(open(src))
    changed = 0
    for row in doc["kernels"]:
        if not row.get("label", "").startswith("layer "):
            continue
        got = layer_work(row["label"], 4 if row["dtype"] == "fp32" else 2)
        if got is None:
            sys.exit(f"{src}: cannot read the label '{row['label']}'")
        cls, w = got
        if abs(w["flops"] - row["flops"]) > 1e-6 * max(1.0, row["flops"]) or abs(w["bytes"] - row["bytes"]) > 1e-6 * row["bytes"]:
            sys.exit(f"{src}: '{row['label']}': FLOPs or bytes differ from the file's; not restated")
        before = {k: row.get(k) for k in ("m", "n", "k", "batch", "variant")}
        row["class"] = cls
        for k in ("m", "n", "k", "batch"):
            if k in w:
                row[k] = w[k]
        if "variant" in w:
            row["variant"] = w["variant"]
        else:
            row.pop("variant", None)
        changed += before != {k: row.get(k) for k in ("m", "n", "k", "batch", "variant")}
    doc.setdefault("notes", []).append(f"layer rows restated by scripts/layer_shapes.py --restate ({changed} changed)")
    tmp = dst + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(tmp, dst)
    print(f"{dst}: {changed} layer rows restated")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--restate", nargs=2, metavar=("IN", "OUT"),
                    help="rewrite the work fields of a measurement file's layer rows as the bench writes them now")
    ap.add_argument("-o", "--output", default=os.path.join(ROOT, "data/zoo/layer-shapes.json"))
    ap.add_argument("--max-conv", type=int, default=160,
                    help="keep at most this many of the models' convolution rows (the most frequent of each "
                         "kind; the grids are kept whole)")
    ap.add_argument("--ftax", default=os.path.join(ROOT, "build/ftax"),
                    help="the ftax binary whose shape inference gives the layer norms' shapes")
    args = ap.parse_args()
    if args.restate:
        restate(*args.restate)
        return
    if onnx is None:
        sys.exit("layer_shapes.py: needs the onnx package (python3 -m pip install onnx)")
    split = json.load(open(os.path.join(ROOT, "data/zoo/split.json")))
    corpus = json.load(open(os.path.join(ROOT, "tests/data/parity/corpus.json")))
    merged, merged_norms, report = {}, {}, {}
    for name in split["calibration"]:
        entry = corpus.get(name)
        if not entry or "onnx" not in entry.get("forms", {}):
            report[name] = "no ONNX file in the parity corpus"
            continue
        path = os.path.join(ROOT, "tests/data/parity", entry["forms"]["onnx"])
        rows, unresolved = layers_of(name, path, entry["inputs"])
        norms, norms_unresolved = layer_norms_of(name, path, entry["inputs"], args.ftax)
        report[name] = f"{len(rows)} layers" + (f", {unresolved} with unresolved shapes" if unresolved else "")
        report[name] += f"; {len(norms)} layer norms" + (
            f", {norms_unresolved} with unresolved shapes" if norms_unresolved else "")
        for r in norms:
            m = merged_norms.setdefault((r["positions"], r["hidden"]), dict(r, models=[], count=0))
            m["count"] += 1
            if name not in m["models"]:
                m["models"].append(name)
        for r in rows:
            m = merged.setdefault(key(r), dict(r, models=[], count=0))
            m["count"] += 1
            if name not in m["models"]:
                m["models"].append(name)
    for p, cin, cout in PATCH_GRID:
        r = {"op": "conv", "cin": cin, "cout": cout, "groups": 1, "spatial": [224, 224],
             "kernel": [p, p], "stride": [p, p], "pad": [0, 0], "dilation": [1, 1]}
        m = merged.setdefault(key(r), dict(r, models=[], count=0))
        m.setdefault("grid", True)
    for gw, c, hw in GROUPED_GRID:
        r = {"op": "conv", "cin": c, "cout": c, "groups": c // gw, "spatial": [hw, hw],
             "kernel": [3, 3], "stride": [1, 1], "pad": [1, 1], "dilation": [1, 1]}
        m = merged.setdefault(key(r), dict(r, models=[], count=0))
        m.setdefault("grid", True)
    for g, cin, cout, spatial in GROUPED_POINTWISE_GRID:
        nd = len(spatial)
        r = {"op": "conv", "cin": cin, "cout": cout, "groups": g, "spatial": spatial,
             "kernel": [1] * nd, "stride": [1] * nd, "pad": [0] * nd, "dilation": [1] * nd}
        m = merged.setdefault(key(r), dict(r, models=[], count=0))
        m.setdefault("grid", True)
    for cin, cout, hw in ODD_POINTWISE_GRID:
        r = {"op": "conv", "cin": cin, "cout": cout, "groups": 1, "spatial": [hw, hw],
             "kernel": [1, 1], "stride": [1, 1], "pad": [0, 0], "dilation": [1, 1]}
        m = merged.setdefault(key(r), dict(r, models=[], count=0))
        m.setdefault("grid", True)
    rows = sorted(merged.values(), key=lambda r: (r["op"], kind(r), -r["count"], key(r)))
    # Cap the convolutions: per kind, the most frequent geometries first, round-robin.
    convs = [r for r in rows if r["op"] == "conv" and not r.get("grid")]
    grid = [r for r in rows if r.get("grid")]
    by_kind = {}
    for r in convs:
        by_kind.setdefault(kind(r), []).append(r)
    kept, i = [], 0
    while len(kept) < min(args.max_conv, len(convs)):
        for rs in by_kind.values():
            if i < len(rs) and len(kept) < args.max_conv:
                kept.append(rs[i])
        i += 1
    rows = [r for r in rows if r["op"] != "conv"] + sorted(kept + grid, key=lambda r: (kind(r), -r["count"], key(r)))
    for r in rows:
        r["kind"] = kind(r)
    rows += compiled_copies(rows)
    doc = {
        "schema_version": 1,
        "kind": "ftax-layer-shapes",
        "about": "Convolution, pooling and layer-norm geometries of the calibration models "
                 "(data/zoo/split.json), at batch 1, with grids of patchify, grouped 3x3, grouped 1x1 "
                 "and odd-sized 1x1 convolutions, and a copy of each dense, 1x1 and grouped 3x3 "
                 "convolution with channels-last input and weights, as torch.compile runs them; "
                 "ftax bench times each at batch 1, 8 and 64. Made by scripts/layer_shapes.py from "
                 "tests/data/parity.",
        "models": report,
        "batches": [1, 8, 64],
        "layers": rows,
        "layer_norms": sorted(merged_norms.values(), key=lambda r: (r["hidden"], r["positions"])),
    }
    tmp = args.output + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(tmp, args.output)
    kinds = {}
    for r in rows:
        kinds[r["kind"]] = kinds.get(r["kind"], 0) + 1
    print(f"{args.output}: {len(rows)} layers ({', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))}) "
          f"of {len(convs)} distinct convolutions; {len(merged_norms)} layer norms")
    for name, what in report.items():
        print(f"  {name}: {what}")


if __name__ == "__main__":
    main()
