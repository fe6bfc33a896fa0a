"""The validation models: Hugging Face and torchvision architectures built from configs with
random weights (nothing is downloaded), their inputs, and the ftax arch spec that describes
each one. Used by export_torchscript.py and validate_eager.py."""
import json
import os

# name -> (ftax --arch spec, kind)
MODELS = {
    "bert-base": ("bert:layers=12,hidden=768,heads=12,ffn=3072", "text"),
    "distilbert": ("bert:layers=6,hidden=768,heads=12,ffn=3072", "text"),
    "bert-wide": ("bert:layers=12,hidden=1536,heads=12,ffn=6144", "text"),
    "bert-deep": ("bert:layers=24,hidden=768,heads=12,ffn=3072", "text"),
    "gpt2": ("gpt:layers=12,hidden=768,heads=12,ffn=3072", "text"),
    "resnet50": ("resnet:depth=50", "image"),
    # "Efficient" deep-narrow models (the paper's Figure 8): no arch family describes them, so
    # ftax predicts them from their TorchScript traces (export_torchscript.py).
    "mobilebert": ("", "text"),
    "squeezebert": ("", "text"),
    # Models outside the six above, for accuracy on models ftax was never fitted on.
    "bert-large": ("bert:layers=24,hidden=1024,heads=16,ffn=4096", "text"),
    "bert-narrow": ("bert:layers=12,hidden=384,heads=6,ffn=1536", "text"),
    "roberta-base": ("bert:layers=12,hidden=768,heads=12,ffn=3072,vocab=50265,max_pos=514,type_vocab=1", "text"),
    "resnet18": ("resnet:depth=18", "image"),
    "resnet101": ("resnet:depth=101", "image"),
    "mobilenet_v2": ("mobilenet", "image"),
    "efficientnet_b0": ("", "image"),
    "vit_b_16": ("vit", "image"),
}

# The fixed split (data/zoo/split.json): calibration models may teach ftax anything
# (refinement, priors); evaluation models teach nothing, and accuracy is reported on them.
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "zoo", "split.json")) as _f:
    _SPLIT = json.load(_f)
CALIBRATION = _SPLIT["calibration"]
EVALUATION = _SPLIT["evaluation"]
assert sorted(CALIBRATION + EVALUATION) == sorted(MODELS), "data/zoo/split.json and MODELS disagree"


def build(name):
    """Returns an eval-mode torch.nn.Module with random weights."""
    import torch
    tv = {"resnet50", "resnet18", "resnet101", "mobilenet_v2", "efficientnet_b0", "vit_b_16"}
    if name in tv:
        import torchvision
        return getattr(torchvision.models, name)(weights=None).eval()
    import transformers as tf
    if name == "roberta-base":
        return tf.RobertaModel(tf.RobertaConfig()).eval()
    if name == "bert-large":
        return tf.BertModel(tf.BertConfig(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16,
                                          intermediate_size=4096)).eval()
    if name == "bert-narrow":
        return tf.BertModel(tf.BertConfig(hidden_size=384, num_attention_heads=6,
                                          intermediate_size=1536)).eval()
    if name == "gpt2":
        cfg = tf.GPT2Config()
        cfg.use_cache = False
        return tf.GPT2Model(cfg).eval()
    if name == "mobilebert":
        return tf.MobileBertModel(tf.MobileBertConfig(), add_pooling_layer=False).eval()
    if name == "squeezebert":
        return tf.SqueezeBertModel(tf.SqueezeBertConfig()).eval()
    if name == "distilbert":
        return tf.DistilBertModel(tf.DistilBertConfig()).eval()
    kw = {}
    if name == "bert-wide":
        kw = dict(hidden_size=1536, intermediate_size=6144, num_attention_heads=12)
    if name == "bert-deep":
        kw = dict(num_hidden_layers=24)
    return tf.BertModel(tf.BertConfig(**kw)).eval()


def inputs(name, batch, seq, device):
    """Example inputs as a tuple of tensors (positional forward arguments)."""
    import torch
    if MODELS[name][1] == "image":
        return (torch.randn(batch, 3, 224, 224, device=device),)
    ids = torch.randint(0, 30000, (batch, seq), device=device)
    if name == "gpt2":
        # GPT2Model's second positional argument is past_key_values: give ids only (causal
        # attention over the whole sequence, no padding mask).
        return (ids,)
    mask = torch.ones(batch, seq, dtype=torch.long, device=device)
    return (ids, mask)


def cast_inputs(xs, dtype):
    return tuple(x.to(dtype) if x.is_floating_point() else x for x in xs)
