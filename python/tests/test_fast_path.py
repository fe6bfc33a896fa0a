"""The fast path for arch specs (ftax.predict of a spec string or an arch Model, ftax.predict_many)
against the general path (the model source through PredictSweep, as the command line runs it):
the same dicts, bit for bit, and the same errors."""
import json
import os
import random
import threading
import time

import pytest

import ftax
from ftax import _ftax

SPECS = [
    ("bert:layers=2,hidden=256,heads=4", {"seq": 128}),
    ("bert:layers=5,hidden=320,heads=5,ffn=1000", {"seq": 77}),
    ("gpt:layers=3,hidden=512,heads=8", {"seq": 64}),
    ("gpt:layers=2,kv_cache=1,past=100,lm_head=1", {"seq": 1}),
    ("resnet:depth=18,width=32", {}),
    ("mobilenet:width_mult=0.75", {}),
    ("vit:layers=2,hidden=384,heads=6", {}),
    ("vit:layers=2,fast_path=0", {}),
]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FRAMEWORKS = ["pytorch-eager", "libtorch-eager", "torchscript", "cuda-graph"]


def general(spec, dims, profile, interval, framework=FRAMEWORKS, precision=("fp16", "fp32", "bf16"),
            batch=(1, 3, 32)):
    m = ftax.Model(spec, dims=dims)
    return _ftax.predict_model_general(m, profile, list(framework), list(precision), list(batch),
                                       64 if interval else 0, False)["points"]


@pytest.fixture(scope="module")
def h200():
    return ftax.Profile.load("h200")


@pytest.mark.parametrize("spec,dims", SPECS)
@pytest.mark.parametrize("interval", [False, True])
def test_spec_string_and_arch_model_match_the_general_path(h200, spec, dims, interval):
    want = general(spec, dims, h200, interval)
    kw = dict(framework=FRAMEWORKS, precision=["fp16", "fp32", "bf16"], batch=[32, 1, 3, 1], interval=interval)
    assert ftax.predict(spec, profile=h200, dims=dims, **kw) == want
    assert ftax.predict(ftax.Model(spec, dims=dims), profile=h200, **kw) == want


def random_specs(n, seed):
    rng = random.Random(seed)
    specs = []
    for _ in range(n):
        heads = rng.choice([4, 8, 12, 16])
        hidden = heads * rng.choice([32, 64])
        specs.append(f"bert:layers={rng.randint(2, 24)},hidden={hidden},heads={heads},ffn={4 * hidden}")
    return specs


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_a_batch_through_predict_many_equals_the_same_predictions_one_by_one(h200, threads):
    specs = random_specs(60, seed=3)
    models = specs + [ftax.Model("gpt:layers=2,hidden=256,heads=4", dims={"seq": 32}), "resnet:depth=18",
                      ftax.Model(os.path.join(ROOT, "tests", "data", "onnx", "tiny_mlp.onnx"))]
    kw = dict(framework=["cuda-graph", "pytorch-eager"], precision="fp16", batch=[1, 8], dims={"seq": 128})
    many = ftax.predict_many(models, profile=h200, threads=threads, **kw)
    one_by_one = [ftax.predict(m, profile=h200, interval=False, **kw) for m in models]
    assert many == one_by_one
    # and both equal the general path, spec by spec
    for spec, points in zip(specs, many):
        assert points == general(spec, {"seq": 128}, h200, False, ["cuda-graph", "pytorch-eager"], ["fp16"], [1, 8])


@pytest.mark.parametrize("path,shapes", [
    ("tests/data/onnx/bert_base.onnx", None),
    ("tests/data/torchscript/tiny_gpt2.pt", ["input_ids=batchx16"]),
])
def test_an_opened_file_model_predicted_again_gives_the_general_path_numbers(h200, path, shapes):
    m = ftax.Model(os.path.join(ROOT, path), dims=None if shapes else {"seq": 128}, input_shapes=shapes)
    kw = dict(framework=FRAMEWORKS, precision=["fp16", "fp32"], batch=[1, 4])
    want = _ftax.predict_model_general(m, h200, FRAMEWORKS, ["fp16", "fp32"], [1, 4], 0, False)["points"]
    assert ftax.predict(m, profile=h200, interval=False, **kw) == want
    assert ftax.predict(m, profile=h200, interval=False, **kw) == want  # from the kept work lists
    h100 = ftax.Profile.load("h100")
    assert ftax.predict(m, profile=h100, interval=True, **kw) == \
        _ftax.predict_model_general(m, h100, FRAMEWORKS, ["fp16", "fp32"], [1, 4], 64, False)["points"]


def test_kept_work_lists_are_lowered_again_for_a_profile_with_other_kernel_facts(h200, tmp_path):
    # h200 with no statistics memset around eager fp16 attention: one kernel fewer per layer.
    with open(os.path.join(ROOT, "data", "profiles", "h200.json")) as f:
        doc = json.load(f)
    doc["kernel_facts"] = {"attention_eager_memsets": 0}
    path = tmp_path / "h200-no-memset.json"
    path.write_text(json.dumps(doc))
    other = ftax.Profile.load(str(path))
    m = ftax.Model("bert:layers=2,hidden=256,heads=4", dims={"seq": 128})
    kw = dict(framework=["pytorch-eager"], precision=["fp16"], batch=[1, 8], interval=False)
    base = ftax.predict(m, profile=h200, **kw)
    changed = ftax.predict(m, profile=other, **kw)
    assert [p["kernels"] for p in base] == [p["kernels"] + 2 for p in changed]
    assert changed == _ftax.predict_model_general(m, other, ["pytorch-eager"], ["fp16"], [1, 8], 0, False)["points"]
    assert ftax.predict(m, profile=h200, **kw) == base


def test_a_fresh_profile_and_a_warm_one_give_the_same_numbers():
    specs = random_specs(20, seed=5)
    warm = ftax.Profile.load("h100")
    ftax.predict_many(random_specs(50, seed=6), profile=warm, dims={"seq": 128})
    for spec in specs:
        fresh = ftax.Profile.load("h100")
        assert ftax.predict(spec, profile=warm, dims={"seq": 128}) == ftax.predict(spec, profile=fresh, dims={"seq": 128})


def error_of(fn):
    with pytest.raises(Exception) as e:
        fn()
    return type(e.value), str(e.value)


@pytest.mark.parametrize("spec,dims,batch", [
    ("bert:hiden=512", {}, 1),
    ("bert:layers=2", {"seq": 4096}, 1),
    ("bert:layers=2", {"seq": 0}, 1),
    ("bert:layers=2", {}, 0),
    ("nosuch:layers=2", {}, 1),
])
def test_errors_read_the_same_on_both_paths(h200, spec, dims, batch):
    fast = error_of(lambda: ftax.predict(spec, profile=h200, dims=dims, batch=batch))
    slow = error_of(lambda: general(spec, dims, h200, False, batch=[batch]))
    assert fast == slow
    assert fast[0] is ValueError
    many = error_of(lambda: ftax.predict_many(["bert:layers=2", spec], profile=h200, dims=dims, batch=batch))
    assert many == fast


def test_a_batch_dim_among_the_dims_is_served_like_the_cli(h200):
    # The general path builds a probe graph at dims["batch"] before the sweep; the fast path
    # leaves such requests to it.
    assert ftax.predict("bert:layers=2", profile=h200, dims={"batch": 4, "seq": 64}, batch=[1, 2]) == \
        general("bert:layers=2", {"batch": 4, "seq": 64}, h200, True, ["cuda-graph"], ["fp16"], [1, 2])
    with pytest.raises(ValueError):
        ftax.predict("bert:layers=2", profile=h200, dims={"batch": 1 << 21}, batch=1)


def test_predict_many_lets_other_threads_run(h200):
    specs = random_specs(1500, seed=7)
    started, done = threading.Event(), threading.Event()
    result = []

    def work():
        started.set()
        result.append(ftax.predict_many(specs, profile=h200, dims={"seq": 128}))
        done.set()

    t = threading.Thread(target=work)
    t.start()
    started.wait()
    # By the time this thread wakes, the other is inside the native call. Were the GIL held
    # for the whole call, this thread could not run again until the call returned.
    time.sleep(0.02)
    spins = 0
    while not done.is_set():
        spins += 1
    t.join()
    assert len(result[0]) == len(specs)
    assert spins > 100
