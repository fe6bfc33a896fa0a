"""ftax: predict the inference latency of a neural network on a GPU host and framework before
anyone runs it there, and say why (framework overhead against GPU compute).

    import ftax
    h200 = ftax.Profile.load("h200")
    r = ftax.predict("bert:layers=12,hidden=768,heads=12", profile=h200, framework="cuda-graph",
                     precision="fp16", batch=[1, 8, 64], dims={"seq": 128})
    r[0]["latency_ms"], r[0]["bound"]

A model is an arch spec string (docs/arch-specs.md) or a path to an ONNX or TorchScript file.
Open it once with ftax.Model(...) to predict it many times without rebuilding it.
"""
from ._ftax import Profile, Model as _OpenedModel, open_model as _open_model, predict_model as _predict_model
from ._ftax import predict_spec as _predict_spec, predict_many as _predict_many
from ._ftax import inspect_model as _inspect_model, shipped_profiles

__all__ = ["Profile", "Model", "predict", "predict_many", "inspect", "shipped_profiles", "to_dataframe"]

_profiles = {}


def _profile(profile):
    if isinstance(profile, Profile):
        return profile
    if profile not in _profiles:
        _profiles[profile] = Profile.load(profile)
    return _profiles[profile]


def _loaded_profile(profile):
    """The profile, or None where loading it fails (the caller then opens the model first, so
    that a bad model is reported before a bad profile, as always)."""
    try:
        return _profile(profile)
    except Exception:
        return None


def _list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def Model(model, dims=None, input_shapes=None):
    """Opens a model once: an arch spec ("bert:layers=12,hidden=768") or an .onnx / .pt path,
    with dims bound (e.g. {"seq": 128})."""
    if not isinstance(model, str):
        return model
    return _open_model(model, dict(dims or {}), list(input_shapes or []))


def predict(model, profile="h200", framework="cuda-graph", precision="fp16", batch=1, dims=None,
            interval=True, crossover=False):
    """Predicted latency of `model` on `profile` (a name such as "h200", a path, or a Profile).
    framework, precision and batch may be single values or lists; one dict per point with
    latency_ms, interval_ms (p10, p90), framework_ms (sync_wait_ms of it: the CPU waiting for
    the GPU at copies of CPU tensors to it), compute_ms, bound, gpu_util, kernels, dispatches,
    unpriced_ops; under torch.compile's default mode, where the profile prices them,
    graph_inputs (tensors: the tensors of model state the compiled call takes; ms: their cost)
    and modules (modules: the model's modules; ms: what they cost outside the generated code)."""
    if isinstance(model, str) and not crossover:
        p = _loaded_profile(profile)
        if p is not None:
            return _predict_spec(model, dict(dims or {}), p, _list(framework), _list(precision),
                                 [int(b) for b in _list(batch)], 64 if interval else 0)
    m = Model(model, dims)
    r = _predict_model(m, _profile(profile), _list(framework), _list(precision),
                       [int(b) for b in _list(batch)], 64 if interval else 0, bool(crossover))
    return r["points"] if not crossover else r


def predict_many(models, profile="h200", framework="cuda-graph", precision="fp16", batch=1, dims=None,
                 interval=False, threads=1):
    """predict() over many models (e.g. a search's candidate specs); one list of points per
    model, in order, the same as predict() one by one gives. The profile is loaded once; the
    arch specs and opened models are predicted in one native call that releases the GIL (other
    Python threads run meanwhile), spread over `threads` threads."""
    models = list(models)
    p = _profile(profile)
    if not all(isinstance(m, (str, _OpenedModel)) for m in models):
        return [predict(m, p, framework, precision, batch, dims, interval) for m in models]
    return _predict_many(models, dict(dims or {}), p, _list(framework), _list(precision),
                         [int(b) for b in _list(batch)], 64 if interval else 0, int(threads))


def inspect(model, dims=None, batch=1):
    """What is in a model: MACs, FLOPs, parameters, ops, depth, bytes, ops by type."""
    return _inspect_model(Model(model, dims), int(batch))


def to_dataframe(points):
    """A pandas DataFrame of prediction points (pandas must be installed)."""
    import pandas as pd
    return pd.DataFrame(points)
