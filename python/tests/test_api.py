"""The ftax Python module against the CLI it shares its libraries with."""
import json
import os
import subprocess

import pytest

import ftax

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FTAX = os.environ.get("FTAX_BINARY", os.path.join(ROOT, "build", "ftax"))
SPEC = "bert:layers=4,hidden=256,heads=4,ffn=1024"


def test_profile_by_name_and_path():
    p = ftax.Profile.load("h200")
    assert "H200" in p.gpu
    q = ftax.Profile.load(os.path.join(ROOT, "data", "profiles", "h100.json"))
    assert "H100" in q.gpu
    assert set(ftax.shipped_profiles()) >= {"h100", "h200"}
    with pytest.raises(ValueError, match="shipped"):
        ftax.Profile.load("h300")


def test_predict_matches_the_cli():
    pts = ftax.predict(SPEC, profile="h200", framework=["cuda-graph", "pytorch-eager"], precision="fp16",
                       batch=[1, 32], dims={"seq": 128}, interval=False)
    assert len(pts) == 4
    out = subprocess.run([FTAX, "predict", "--arch", SPEC, "--dim", "seq=128", "--profile", "h200",
                          "--framework", "cuda-graph,pytorch-eager", "--precision", "fp16", "--batch", "1,32",
                          "--format", "json"], capture_output=True, text=True, check=True).stdout
    cli = {(p["framework"], p["batch"]): p["latency_ms"] for p in json.loads(out)["predictions"]}
    for p in pts:
        assert p["latency_ms"] == pytest.approx(cli[(p["framework"], p["batch"])], rel=1e-9)
        assert p["bound"] in ("framework", "compute")
        assert p["latency_ms"] >= p["compute_ms"] - 1e-9
        # A BERT spec copies no CPU tensor to the GPU: the CPU never waits for it.
        assert p["sync_wait_ms"] == 0


FRAMEWORKS = ["pytorch-eager", "pytorch-eager-no-grad", "libtorch-eager", "torchscript", "cuda-graph",
              "cuda-graph-eager", "torch-compile", "torch-compile-reduce-overhead"]


def test_every_framework_of_the_cli_is_predicted_as_the_cli_predicts_it():
    pts = ftax.predict(SPEC, profile="h200", framework=FRAMEWORKS, precision="fp16", batch=1,
                       dims={"seq": 128}, interval=False)
    assert sorted(p["framework"] for p in pts) == sorted(FRAMEWORKS)
    out = subprocess.run([FTAX, "predict", "--arch", SPEC, "--dim", "seq=128", "--profile", "h200",
                          "--framework", ",".join(FRAMEWORKS), "--precision", "fp16", "--batch", "1",
                          "--format", "json"], capture_output=True, text=True, check=True).stdout
    cli = {p["framework"]: p["latency_ms"] for p in json.loads(out)["predictions"]}
    assert sorted(cli) == sorted(FRAMEWORKS)
    for p in pts:
        assert p["latency_ms"] == pytest.approx(cli[p["framework"]], rel=1e-9)
    by = {p["framework"]: p["latency_ms"] for p in pts}
    # A graph replay skips the per-op dispatch Python eager pays.
    assert by["cuda-graph-eager"] < by["pytorch-eager"]
    with pytest.raises(ValueError, match="framework"):
        ftax.predict(SPEC, profile="h200", framework="tensorflow", dims={"seq": 128})


def test_a_compiled_point_says_what_its_graph_inputs_and_modules_cost_as_the_cli_does(tmp_path):
    # h200's profile with a price per tensor of model state, as a bench with the chain of
    # parameters writes it: ResNet-18's 20 batch norms pass 80 tensors to the compiled call.
    with open(os.path.join(ROOT, "data", "profiles", "h200.json")) as f:
        prof = json.load(f)
    prof["frameworks"]["torch-compile"]["input_us"] = {"value": 2.0, "stderr": 0.1, "unit": "us"}
    prof["frameworks"]["torch-compile"]["module_us"] = {"value": 0.5, "stderr": 0.1, "unit": "us"}
    path = str(tmp_path / "h200-inputs.json")
    with open(path, "w") as f:
        json.dump(prof, f)
    pts = ftax.predict("resnet:depth=18", profile=path, framework=["torch-compile", "pytorch-eager"],
                       interval=False)
    by = {p["framework"]: p for p in pts}
    assert by["torch-compile"]["graph_inputs"]["tensors"] == 80
    assert by["torch-compile"]["graph_inputs"]["ms"] == pytest.approx(0.16, rel=1e-9)
    assert "graph_inputs" not in by["pytorch-eager"]
    modules = by["torch-compile"]["modules"]
    assert modules["ms"] == pytest.approx(modules["modules"] * 0.5e-3, rel=1e-9)
    assert "modules" not in by["pytorch-eager"]
    out = subprocess.run([FTAX, "predict", "--arch", "resnet:depth=18", "--profile", path,
                          "--framework", "torch-compile", "--format", "json"],
                         capture_output=True, text=True, check=True).stdout
    cli = json.loads(out)["predictions"][0]
    assert cli["graph_inputs"] == by["torch-compile"]["graph_inputs"]
    assert cli["modules"] == modules


def test_a_reduce_overhead_point_says_what_comes_before_its_replay_as_the_cli_does():
    pts = ftax.predict("resnet:depth=18", profile="h200", framework="torch-compile-reduce-overhead", interval=False)
    p = pts[0]
    assert p["modules"]["modules"] > 20  # ResNet-18's modules, whose guards run before the replay
    assert p["before_replay_ms"] > p["modules"]["ms"]  # the call's own part besides them
    assert p["latency_ms"] == pytest.approx(p["before_replay_ms"] + p["compute_ms"] + p["node_gap_ms"], rel=1e-9)
    out = subprocess.run([FTAX, "predict", "--arch", "resnet:depth=18", "--profile", "h200", "--framework",
                          "torch-compile-reduce-overhead", "--samples", "0", "--format", "json"],
                         capture_output=True, text=True, check=True).stdout
    cli = json.loads(out)["predictions"][0]
    assert cli["before_replay_ms"] == pytest.approx(p["before_replay_ms"], rel=1e-12)
    assert cli["node_gap_ms"] == pytest.approx(p["node_gap_ms"], rel=1e-12)


def test_deeper_is_slower_and_a_reused_model_gives_the_same_answer():
    m = ftax.Model(SPEC, dims={"seq": 128})
    a = ftax.predict(m, batch=1, interval=False)[0]["latency_ms"]
    b = ftax.predict(m, batch=1, interval=False)[0]["latency_ms"]
    deep = ftax.predict(SPEC.replace("layers=4", "layers=8"), batch=1, dims={"seq": 128}, interval=False)
    assert a == b
    assert deep[0]["latency_ms"] > a


def test_bad_spec_is_a_value_error_naming_the_key():
    with pytest.raises(ValueError, match="hiden"):
        ftax.predict("bert:hiden=512")


def test_inspect_counts_macs_like_the_cli():
    d = ftax.inspect("resnet:depth=50", batch=1)
    out = subprocess.run([FTAX, "inspect", "--arch", "resnet:depth=50", "--dim", "batch=1", "--format", "json"],
                         capture_output=True, text=True, check=True).stdout
    assert d["macs"] == pytest.approx(json.loads(out)["totals"]["macs"], rel=1e-12)
    assert 4.0e9 < d["macs"] < 4.2e9  # torchvision's ResNet-50: 4.09 GMACs
