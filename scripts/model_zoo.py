"""The model zoo: torchvision, timm and Hugging Face architectures built from configs with random
weights (nothing is downloaded), their example inputs, their family, and the ftax arch spec that
describes each one where an arch family fits (otherwise ftax predicts it from its TorchScript
trace). Used by export_torchscript.py, validate_eager.py and validation/scripts/zoo_campaign.sh.

Inputs, as in the paper: text at sequence 128 (token ids and an attention mask), images of
3x224x224 (299x299 for Inception-v3), speech as 2 s at 16 kHz (32,000 samples), Whisper as an
80-bin log-mel spectrogram of 3,000 frames (its fixed 30 s window). Decoders with a KV cache
are timed on one new token after a cache of `seq` tokens.

The fixed split (data/zoo/split.json): calibration models may teach ftax anything (refinement,
priors); evaluation models teach nothing, and accuracy is reported on them alone.
"""
import json
import os

# name -> (ftax --arch spec or "", input kind, family)
# Input kinds: text (ids, mask), ids (ids only), decode (one token + KV cache of seq tokens),
# image, image299, audio (32,000 samples), mel (80 x 3,000).
ZOO = {
    # CNNs (torchvision)
    "resnet18": ("resnet:depth=18", "image", "cnn"),
    "resnet34": ("resnet:depth=34", "image", "cnn"),
    "resnet50": ("resnet:depth=50", "image", "cnn"),
    "resnet101": ("resnet:depth=101", "image", "cnn"),
    "resnet152": ("resnet:depth=152", "image", "cnn"),
    "resnext50_32x4d": ("", "image", "cnn"),
    "wide_resnet50_2": ("", "image", "cnn"),
    "regnet_y_400mf": ("", "image", "cnn"),
    "regnet_x_1_6gf": ("", "image", "cnn"),
    "densenet121": ("", "image", "cnn"),
    "densenet169": ("", "image", "cnn"),
    "mobilenet_v2": ("mobilenet", "image", "cnn-mobile"),
    "mobilenet_v3_large": ("", "image", "cnn-mobile"),
    "mobilenet_v3_small": ("", "image", "cnn-mobile"),
    "efficientnet_b0": ("", "image", "cnn-mobile"),
    "efficientnet_b2": ("", "image", "cnn-mobile"),
    "mnasnet1_0": ("", "image", "cnn-mobile"),
    "shufflenet_v2_x1_0": ("", "image", "cnn-mobile"),
    "squeezenet1_1": ("", "image", "cnn"),
    "googlenet": ("", "image", "cnn"),
    "inception_v3": ("", "image299", "cnn"),
    "vgg16_bn": ("", "image", "cnn"),
    "convnext_tiny": ("", "image", "cnn-modern"),
    "convnext_small": ("", "image", "cnn-modern"),
    # Vision transformers (torchvision, timm)
    "vit_b_16": ("vit", "image", "vision-transformer"),
    "vit_b_32": ("vit:patch=32", "image", "vision-transformer"),
    "vit_l_16": ("vit:layers=24,hidden=1024,heads=16,ffn=4096", "image", "vision-transformer"),
    "deit_small": ("", "image", "vision-transformer"),
    "deit_tiny": ("", "image", "vision-transformer"),
    "swin_t": ("", "image", "vision-transformer"),
    "swin_s": ("", "image", "vision-transformer"),
    # Encoders (transformers)
    "bert-base": ("bert:layers=12,hidden=768,heads=12,ffn=3072", "text", "encoder"),
    "distilbert": ("distilbert:layers=6,hidden=768,heads=12,ffn=3072", "text", "encoder"),
    "bert-wide": ("bert:layers=12,hidden=1536,heads=12,ffn=6144", "text", "encoder"),
    "bert-deep": ("bert:layers=24,hidden=768,heads=12,ffn=3072", "text", "encoder"),
    "bert-large": ("bert:layers=24,hidden=1024,heads=16,ffn=4096", "text", "encoder"),
    "bert-narrow": ("bert:layers=12,hidden=384,heads=6,ffn=1536", "text", "encoder"),
    "roberta-base": ("bert:layers=12,hidden=768,heads=12,ffn=3072,vocab=50265,max_pos=514,type_vocab=1",
                     "text", "encoder"),
    "albert-base": ("", "text", "encoder"),
    "electra-small": ("", "text", "encoder"),
    "deberta-v3-base": ("", "text", "encoder"),
    "funnel-small": ("", "text", "encoder-efficient"),
    "mobilebert": ("", "text", "encoder-efficient"),
    "squeezebert": ("", "text", "encoder-efficient"),
    # Decoders (transformers): a forward over seq tokens, and one decode step with a KV cache
    "gpt2": ("gpt:layers=12,hidden=768,heads=12,ffn=3072", "ids", "decoder"),
    "gpt2-medium": ("gpt:layers=24,hidden=1024,heads=16,ffn=4096", "ids", "decoder"),
    "opt-125m": ("", "ids", "decoder"),
    "gpt2-kv": ("", "decode", "decoder"),
    "opt-125m-kv": ("", "decode", "decoder"),
    # Speech and seq2seq encoders (transformers)
    "wav2vec2-base": ("", "audio", "speech"),
    "wavlm-base": ("", "audio", "speech"),
    "whisper-base-encoder": ("", "mel", "speech"),
    "t5-small-encoder": ("", "ids", "seq2seq-encoder"),
    "bart-base-encoder": ("", "text", "seq2seq-encoder"),
}

# Back-compatible view used by the scripts: name -> (spec, kind), where kind is "text" for
# every model whose row has a sequence length and "image" for the rest.
MODELS = {n: (spec, "text" if kind in ("text", "ids", "decode") else "image")
          for n, (spec, kind, _) in ZOO.items()}

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "zoo", "split.json")) as _f:
    _SPLIT = json.load(_f)
CALIBRATION = _SPLIT["calibration"]
EVALUATION = _SPLIT["evaluation"]
assert sorted(CALIBRATION + EVALUATION) == sorted(ZOO), "data/zoo/split.json and ZOO disagree"
assert not set(CALIBRATION) & set(EVALUATION), "a model is on both sides of data/zoo/split.json"

TORCHVISION = {n for n, (_, kind, fam) in ZOO.items() if kind.startswith("image")} - {"deit_small", "deit_tiny"}


def family(name):
    return ZOO[name][2]


def input_kind(name):
    return ZOO[name][1]


class _DecodeStep:
    """Wraps a causal LM body so that one decode step takes plain tensors: forward(ids, k0, v0,
    k1, v1, ...) with the cache of every layer as [batch, heads, past, head_dim]."""

    @staticmethod
    def wrap(body, n_layers):
        import torch

        class DecodeStep(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.body = body

            def forward(self, ids, *kv):
                past = tuple((kv[2 * i], kv[2 * i + 1]) for i in range(n_layers))
                try:
                    from transformers import DynamicCache
                except ImportError:  # old transformers: the legacy tuple of tuples
                    DynamicCache = None
                if DynamicCache is not None and hasattr(DynamicCache, "from_legacy_cache"):
                    past = DynamicCache.from_legacy_cache(past)
                elif DynamicCache is not None:  # transformers 5: filled layer by layer
                    cache = DynamicCache()
                    for i, (k, v) in enumerate(past):
                        cache.update(k, v, i)
                    past = cache
                return self.body(input_ids=ids, past_key_values=past, use_cache=True).last_hidden_state

        return DecodeStep().eval()


def _hf(name):
    import transformers as tf
    if name == "bert-large":
        return tf.BertModel(tf.BertConfig(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16,
                                          intermediate_size=4096))
    if name == "bert-narrow":
        return tf.BertModel(tf.BertConfig(hidden_size=384, num_attention_heads=6, intermediate_size=1536))
    if name == "bert-wide":
        return tf.BertModel(tf.BertConfig(hidden_size=1536, intermediate_size=6144, num_attention_heads=12))
    if name == "bert-deep":
        return tf.BertModel(tf.BertConfig(num_hidden_layers=24))
    if name == "bert-base":
        return tf.BertModel(tf.BertConfig())
    if name == "roberta-base":
        return tf.RobertaModel(tf.RobertaConfig())
    if name == "distilbert":
        return tf.DistilBertModel(tf.DistilBertConfig())
    if name == "albert-base":
        return tf.AlbertModel(tf.AlbertConfig(hidden_size=768, num_attention_heads=12, intermediate_size=3072))
    if name == "electra-small":
        return tf.ElectraModel(tf.ElectraConfig(embedding_size=128, hidden_size=256, num_attention_heads=4,
                                                intermediate_size=1024))
    if name == "deberta-v3-base":
        return tf.DebertaV2Model(tf.DebertaV2Config(hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                                                    intermediate_size=3072, relative_attention=True,
                                                    position_buckets=256, pos_att_type=["p2c", "c2p"],
                                                    norm_rel_ebd="layer_norm", share_att_key=True,
                                                    max_relative_positions=-1, position_biased_input=False,
                                                    vocab_size=128100))
    if name == "funnel-small":
        return tf.FunnelBaseModel(tf.FunnelConfig(block_sizes=[4, 4, 4], d_model=768, n_head=12, d_head=64,
                                                  d_inner=3072))
    if name == "mobilebert":
        return tf.MobileBertModel(tf.MobileBertConfig(), add_pooling_layer=False)
    if name == "squeezebert":
        return tf.SqueezeBertModel(tf.SqueezeBertConfig())
    if name in ("gpt2", "gpt2-medium", "gpt2-kv"):
        cfg = tf.GPT2Config() if name != "gpt2-medium" else tf.GPT2Config(n_embd=1024, n_layer=24, n_head=16)
        cfg.use_cache = name == "gpt2-kv"
        m = tf.GPT2Model(cfg)
        return _DecodeStep.wrap(m.eval(), cfg.n_layer) if name == "gpt2-kv" else m
    if name in ("opt-125m", "opt-125m-kv"):
        cfg = tf.OPTConfig(hidden_size=768, num_hidden_layers=12, ffn_dim=3072, num_attention_heads=12,
                           word_embed_proj_dim=768)
        cfg.use_cache = name == "opt-125m-kv"
        m = tf.OPTModel(cfg)
        return _DecodeStep.wrap(m.eval(), cfg.num_hidden_layers) if name == "opt-125m-kv" else m
    if name == "wav2vec2-base":
        return tf.Wav2Vec2Model(tf.Wav2Vec2Config())
    if name == "wavlm-base":
        return tf.WavLMModel(tf.WavLMConfig())
    if name == "whisper-base-encoder":
        cfg = tf.WhisperConfig(d_model=512, encoder_layers=6, encoder_attention_heads=8, encoder_ffn_dim=2048,
                               decoder_layers=6, decoder_attention_heads=8, decoder_ffn_dim=2048)
        return tf.WhisperModel(cfg).get_encoder()
    if name == "t5-small-encoder":
        return tf.T5EncoderModel(tf.T5Config(d_model=512, d_ff=2048, num_layers=6, num_heads=8))
    if name == "bart-base-encoder":
        return tf.BartModel(tf.BartConfig()).get_encoder()
    raise KeyError(name)


def build(name):
    """Returns an eval-mode torch.nn.Module with random weights."""
    if name not in ZOO:
        raise KeyError(f"unknown zoo model '{name}' (scripts/model_zoo.py lists {len(ZOO)})")
    if name in ("deit_small", "deit_tiny"):
        import timm
        return timm.create_model(name + "_patch16_224", pretrained=False).eval()
    if name in TORCHVISION:
        import torchvision
        kw = {"aux_logits": False, "init_weights": False} if name in ("inception_v3", "googlenet") else {}
        return getattr(torchvision.models, name)(weights=None, **kw).eval()
    m = _hf(name)
    cfg = getattr(m, "config", None)
    if cfg is not None and hasattr(cfg, "return_dict"):
        cfg.torchscript = True  # tuple outputs, as torch.jit.trace needs
    return m.eval()


def _kv_shape(name, batch, seq):
    """Layers and per-layer cache shape of the decode-step models (GPT-2 and OPT-125m share
    12 layers of 12 heads of 64)."""
    return 12, (batch, 12, seq, 64)


def inputs(name, batch, seq, device):
    """Example inputs as a tuple of tensors (positional forward arguments)."""
    import torch
    kind = input_kind(name)
    if kind == "image":
        return (torch.randn(batch, 3, 224, 224, device=device),)
    if kind == "image299":
        return (torch.randn(batch, 3, 299, 299, device=device),)
    if kind == "audio":
        return (torch.randn(batch, 32000, device=device),)
    if kind == "mel":
        return (torch.randn(batch, 80, 3000, device=device),)
    ids = torch.randint(0, 30000, (batch, seq), device=device)
    if kind == "ids":
        # Decoders and T5's encoder take ids alone here (causal attention over the whole
        # sequence, no padding mask).
        return (ids,)
    if kind == "decode":
        n_layers, shape = _kv_shape(name, batch, seq)
        kv = []
        for _ in range(n_layers):
            kv += [torch.randn(*shape, device=device), torch.randn(*shape, device=device)]
        return (ids[:, :1], *kv)
    mask = torch.ones(batch, seq, dtype=torch.long, device=device)
    return (ids, mask)


def cast_inputs(xs, dtype):
    return tuple(x.to(dtype) if x.is_floating_point() else x for x in xs)


def part(k, n):
    """The models of part k of n (1-based) of the zoo, for campaigns split into device calls:
    every n-th model of the zoo's order, so that each part mixes families and sizes."""
    if not 1 <= k <= n:
        raise ValueError(f"part {k}/{n}: k must be between 1 and n")
    return [m for i, m in enumerate(ZOO) if i % n == k - 1]


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser(description="Lists the zoo's models (comma-separated).")
    ap.add_argument("--part", default="1/1", help="K/N: part K of N (default: the whole zoo)")
    ap.add_argument("--side", choices=["all", "calibration", "evaluation"], default="all")
    a = ap.parse_args()
    k, n = (int(v) for v in a.part.split("/"))
    names = part(k, n)
    if a.side != "all":
        names = [m for m in names if m in (CALIBRATION if a.side == "calibration" else EVALUATION)]
    print(",".join(names))
