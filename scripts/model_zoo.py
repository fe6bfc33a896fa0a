"""The validation models: Hugging Face and torchvision architectures built from configs with
random weights (nothing is downloaded), their inputs, and the ftax arch spec that describes
each one. Used by export_torchscript.py and validate_eager.py."""

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
}


def build(name):
    """Returns an eval-mode torch.nn.Module with random weights."""
    import torch
    if name == "resnet50":
        import torchvision
        return torchvision.models.resnet50(weights=None).eval()
    import transformers as tf
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
