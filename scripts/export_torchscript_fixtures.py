#!/usr/bin/env python3
"""Trace TorchScript fixtures (and their ONNX twins) for ftax's TorchScript loader tests.

Every model is built from its config with random weights (nothing is downloaded), traced in
eval mode under torch.no_grad() as a user would, and saved with its weights ZEROED and the
archive re-compressed (deflate): ftax never reads weight values, only their dims and dtypes,
so a zeroed file inspects exactly like the original and a zip of zeros is small. LibTorch 1.13
and 2.11 both load such files.

Modes:
  --tiny (default)  tests/data/torchscript/: pure-torch tiny models (any torch >= 1.13; the
                    file name carries the torch version that traced it) and, when
                    transformers/torchvision are importable, tiny configs of BERT, GPT-2,
                    ResNet (basic and bottleneck), MobileNetV2 and ViT with an ONNX twin each.
  --full            tests/data/torchscript/full/ (not committed): ResNet-18/50, MobileNetV2,
                    ViT-B/16, BERT-base and GPT-2 at full size, each as .pt and .onnx; the
                    parity test (FullParity in tests/graph/torchscript_loader_torch_test.cc) runs on them
                    when present.

Usage:
  /usr/bin/python3 scripts/export_torchscript_fixtures.py           # Debian python3-torch 1.13
  .torch/bin/python scripts/export_torchscript_fixtures.py          # torch 2.11 + HF + torchvision
  .torch/bin/python scripts/export_torchscript_fixtures.py --full
"""
import argparse
import json
import os
import sys

import torch

from trace_archive import zero_and_deflate  # noqa: E402

SDPA = False  # --sdpa
HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "tests", "data", "torchscript")


def version_tag():
    major, minor = torch.__version__.split(".")[:2]
    return "v%s%s" % (major, minor)


# ---- pure-torch tiny models (any torch version) ----

class TinyCnn(torch.nn.Module):
    """conv/bn/relu/maxpool, a depthwise conv, a residual add, global pooling, flatten, linear."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 16, 3, stride=2, padding=1, bias=False)
        self.bn = torch.nn.BatchNorm2d(16)
        self.pool = torch.nn.MaxPool2d(3, stride=2, padding=1)
        self.dw = torch.nn.Conv2d(16, 16, 3, padding=1, groups=16)
        self.fc = torch.nn.Linear(16, 10)

    def forward(self, x):
        y = self.pool(torch.relu(self.bn(self.conv(x))))
        y = y + self.dw(y)
        y = torch.nn.functional.adaptive_avg_pool2d(y, 1)
        return self.fc(torch.flatten(y, 1)).softmax(-1)


class TinyAttention(torch.nn.Module):
    """Embedding, layer norm, q/k/v linears, head split by size() arithmetic, matmul attention,
    GELU MLP, chunk and cat."""

    def __init__(self, vocab=100, hidden=32, heads=4):
        super().__init__()
        self.heads = heads
        self.emb = torch.nn.Embedding(vocab, hidden)
        self.ln = torch.nn.LayerNorm(hidden)
        self.qkv = torch.nn.Linear(hidden, 3 * hidden)
        self.out = torch.nn.Linear(hidden, hidden)
        self.up = torch.nn.Linear(hidden, 2 * hidden)
        self.down = torch.nn.Linear(hidden, hidden)

    def forward(self, input_ids):
        x = self.ln(self.emb(input_ids))
        b, s, h = x.size(0), x.size(1), x.size(2)
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.view(b, s, self.heads, h // self.heads).transpose(1, 2)
        k = k.view(b, s, self.heads, h // self.heads).transpose(1, 2)
        v = v.view(b, s, self.heads, h // self.heads).transpose(1, 2)
        a = torch.matmul(q, k.transpose(-1, -2)) / (h // self.heads) ** 0.5
        a = torch.matmul(a.softmax(-1), v).transpose(1, 2).reshape(b, s, h)
        x = x + self.out(a)
        g1, g2 = self.up(x).split(h, dim=-1)
        x = x + self.down(torch.nn.functional.gelu(g1) * g2)
        return torch.cat([x[:, :1], x[:, 1:]], dim=1)


class TinyScripted(torch.nn.Module):
    """torch.jit.script with a loop of constant trip count and an If on a constant flag."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)
        self.use_relu = True

    def forward(self, x):
        for _ in range(3):
            x = self.fc(x)
        if self.use_relu:
            x = torch.relu(x)
        else:
            x = torch.sigmoid(x)
        return x


def save_traced(module, inputs, path, script=False):
    module.eval()
    with torch.no_grad():
        traced = torch.jit.script(module) if script else torch.jit.trace(module, inputs, check_trace=False)
    traced.save(path)
    zero_and_deflate(path)
    torch.jit.load(path)  # still loads
    return traced


def tiny_pure(out_dir):
    tag = version_tag()
    torch.manual_seed(0)
    rows = []
    for name, module, inputs, script in (
            ("tiny_cnn", TinyCnn(), (torch.randn(2, 3, 32, 32),), False),
            ("tiny_attention", TinyAttention(), (torch.randint(0, 100, (2, 16)),), False),
            ("tiny_scripted", TinyScripted(), (torch.randn(4, 8),), True)):
        path = os.path.join(out_dir, "%s.%s.pt" % (name, tag))
        save_traced(module, inputs, path, script)
        rows.append((path, [list(x.shape) for x in inputs]))
    return rows


# ---- Hugging Face and torchvision models (torch 2.x with transformers, torchvision) ----

class HfWrapper(torch.nn.Module):
    def __init__(self, m, with_mask):
        super().__init__()
        self.m = m
        self.with_mask = with_mask

    def forward(self, input_ids, attention_mask=None):
        if self.with_mask:
            return self.m(input_ids=input_ids, attention_mask=attention_mask, return_dict=False)[0]
        return self.m(input_ids=input_ids, return_dict=False)[0]


class HfIdsOnly(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, input_ids):
        return self.m(input_ids=input_ids, return_dict=False)[0]


def hf_attention(tiny):
    # The fixtures use the "eager" attention (matmul, softmax), as the ONNX twins do: LibTorch
    # 1.13 has no aten::scaled_dot_product_attention, and the files must load in both versions.
    # --sdpa keeps the default (SDPA), what inference with torch 2.x runs.
    return {} if SDPA else {"attn_implementation": "eager"}


def with_attention(cfg, tiny):
    for k, v in hf_attention(tiny).items():
        setattr(cfg, "_" + k, v)
    return cfg


def hf_bert(tiny):
    from transformers import BertConfig, BertModel
    cfg = BertConfig(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
                     vocab_size=1000) if tiny else BertConfig()
    model = BertModel(with_attention(cfg, tiny), add_pooling_layer=False).eval()
    seq = 16 if tiny else 128
    ids = torch.randint(0, cfg.vocab_size, (1, seq))
    mask = torch.ones(1, seq, dtype=torch.int64)
    return HfWrapper(model, True).eval(), (ids, mask), ["input_ids", "attention_mask"]


def hf_gpt2(tiny):
    from transformers import GPT2Config, GPT2Model
    cfg = GPT2Config(n_embd=64, n_layer=2, n_head=4, vocab_size=1000, n_positions=64) if tiny else GPT2Config()
    cfg.use_cache = False
    model = GPT2Model(with_attention(cfg, tiny)).eval()
    seq = 16 if tiny else 128
    return HfIdsOnly(model).eval(), (torch.randint(0, cfg.vocab_size, (1, seq)),), ["input_ids"]


def tv(ctor_name, tiny):
    import torchvision.models as tvm
    from torchvision.models.resnet import BasicBlock, Bottleneck, ResNet
    size = 64 if tiny else 224
    if tiny and ctor_name == "resnet18":
        model = ResNet(BasicBlock, [1, 1, 1, 1], num_classes=10)
    elif tiny and ctor_name == "resnet50":
        model = ResNet(Bottleneck, [1, 1, 1, 1], num_classes=10)
    elif tiny and ctor_name == "mobilenet_v2":
        model = tvm.mobilenet_v2(weights=None, width_mult=0.25, num_classes=10)
    elif tiny and ctor_name == "vit_b_16":
        from torchvision.models.vision_transformer import VisionTransformer
        model = VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=32,
                                  mlp_dim=64, num_classes=10)
        size = 32
    else:
        model = getattr(tvm, ctor_name)(weights=None)
    return model.eval(), (torch.randn(1, 3, size, size),), ["x"]  # forward's argument name


HF_TV = {
    "bert_base": lambda tiny: hf_bert(tiny),
    "gpt2": lambda tiny: hf_gpt2(tiny),
    "resnet18": lambda tiny: tv("resnet18", tiny),
    "resnet50": lambda tiny: tv("resnet50", tiny),
    "mobilenet_v2": lambda tiny: tv("mobilenet_v2", tiny),
    "vit_b_16": lambda tiny: tv("vit_b_16", tiny),
}


def export_onnx(model, inputs, names, path):
    sys.path.insert(0, HERE)
    import onnx
    import export_onnx_fixtures
    axes = {n: {0: "batch"} for n in names}
    with torch.no_grad():
        try:
            torch.onnx.export(model, inputs, path, input_names=names, output_names=["output"],
                              dynamic_axes=axes, opset_version=17, do_constant_folding=True,
                              dynamo=False)
        except Exception as e:  # e.g. aten::diff in transformers' GPT-2 masking
            print("%s: TorchScript-based ONNX export failed (%s); using the dynamo exporter"
                  % (os.path.basename(path), str(e).splitlines()[0]), file=sys.stderr)
            torch.onnx.export(model, inputs, path, input_names=names, output_names=["output"],
                              opset_version=18, dynamo=True, external_data=False)
    m = onnx.load(path, load_external_data=True)
    onnx.save(export_onnx_fixtures.strip_weights(m), path)
    for f in os.listdir(os.path.dirname(path)):  # the exporter may leave external data files
        if f.endswith(".onnx.data"):
            os.remove(os.path.join(os.path.dirname(path), f))


def hf_tv(out_dir, tiny, only):
    rows = []
    # nn.MultiheadAttention's fused fast path has no ONNX export: the ONNX twin uses the
    # decomposed path; the TorchScript file records what eager inference dispatches.
    for name, build in HF_TV.items():
        if only and name not in only:
            continue
        torch.manual_seed(0)
        model, inputs, names = build(tiny)
        base = os.path.join(out_dir, ("tiny_" if tiny else "") + name)
        save_traced(model, inputs, base + ".pt")
        torch.backends.mha.set_fastpath_enabled(False)
        try:
            export_onnx(model, inputs, names, base + ".onnx")
        finally:
            torch.backends.mha.set_fastpath_enabled(True)
        meta = {"inputs": {n: list(x.shape) for n, x in zip(names, inputs)},
                "torch": torch.__version__, "params": sum(p.numel() for p in model.parameters())}
        with open(base + ".json", "w") as f:
            json.dump(meta, f, indent=1)
        rows.append((base + ".pt", meta["inputs"]))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="full-size models into tests/data/torchscript/full")
    ap.add_argument("--only", action="append", choices=sorted(HF_TV))
    ap.add_argument("--out", default=None)
    ap.add_argument("--sdpa", action="store_true",
                    help="trace Hugging Face models with their default SDPA attention (torch >= 2.0 "
                         "loads them; the ONNX twin still uses eager attention)")
    a = ap.parse_args()
    global SDPA
    SDPA = a.sdpa
    out = a.out or (os.path.join(DATA, "full") if a.full else DATA)
    os.makedirs(out, exist_ok=True)
    rows = [] if a.full else tiny_pure(out)
    try:
        import torchvision  # noqa: F401
        import transformers  # noqa: F401
        have_hf = True
    except ImportError:
        have_hf = False
        print("transformers/torchvision not importable: pure-torch fixtures only", file=sys.stderr)
    if have_hf:
        rows += hf_tv(out, not a.full, a.only)
    for path, shapes in rows:
        print("%-60s %9d bytes  inputs %s" % (os.path.relpath(path), os.path.getsize(path), shapes))


if __name__ == "__main__":
    main()
