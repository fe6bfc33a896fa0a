#!/usr/bin/env python3
"""Generate ftax's hostile-input cases: bad models, profiles, measurement files and measured rows.

Writes tests/hostile/cases/ (the input files, all small) and tests/hostile/cases.json (one entry
per case: the ftax command line, what the test prepares in the case's empty working directory,
and the expected exit code and messages). tests/cli/hostile_cli_test.cc runs every entry against
the built binary and checks, besides the exit code and messages, that ftax was not killed by a
signal, that no file named INJECTED appeared (every injection payload below tries to create one),
that the working directory holds exactly the files the case expects, and that files the case
put there (victims) are byte for byte unchanged.

The expectations are written here by hand, case by case, never copied from a run's output.
Models are built with the `onnx` package (pip install onnx); the generated files are committed,
so the test itself needs no Python.

Usage: python3 tests/hostile/make_cases.py   (from anywhere; rewrites cases/ and cases.json)

Placeholders in a case's arguments: {cases} is tests/hostile/cases, {root} the source tree,
{work} the case's working directory (also its current directory).
"""
import json
import os
import shutil

import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CASES = os.path.join(HERE, "cases")
# Run by a shell, this creates the file the test names in FTAX_INJECT_MARK (a file INJECTED in
# the case's working directory); run by nothing, it is only text.
INJECT = "touch $FTAX_INJECT_MARK"
OPSET = [helper.make_opsetid("", 17)]
BIG = 1 << 62

cases = []


def case(name, args, rc, stderr=(), stdout=(), creates=(), setup=None, timeout_s=30, needs=()):
    cases.append({"name": name, "args": list(args), "rc": rc, "stderr": list(stderr),
                  "stdout": list(stdout), "creates": list(creates), "setup": setup or {},
                  "timeout_s": timeout_s, "needs": list(needs)})


def save_model(name, nodes, inputs, outputs, inits=(), value_info=()):
    g = helper.make_graph(nodes, name, inputs, outputs, list(inits), value_info=list(value_info))
    m = helper.make_model(g, opset_imports=OPSET, producer_name="ftax-hostile-cases")
    m.ir_version = 8
    onnx.save(m, os.path.join(CASES, name + ".onnx"))


def vi(name, dims, t=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, t, dims)


def const_i64(name, values, dims=None):
    return helper.make_tensor(name, TensorProto.INT64, dims if dims is not None else [len(values)], values)


def const_f32(name, values, dims=None):
    return helper.make_tensor(name, TensorProto.FLOAT, dims if dims is not None else [len(values)], values)


def write_json(name, doc, compact=True):
    with open(os.path.join(CASES, name), "w") as f:
        json.dump(doc, f, separators=(",", ":") if compact else None, indent=None if compact else 1)
        f.write("\n")


# ---- models ------------------------------------------------------------------------------------

def conv_model(name, x_dims, w_dims, **attrs):
    save_model(name, [helper.make_node("Conv", ["x", "w"], ["y"], name="conv0", **attrs)],
               [vi("x", x_dims)], [vi("y", None)],
               [const_f32("w", [0.0] * _prod(w_dims), w_dims)])


def _prod(dims):
    n = 1
    for d in dims:
        n *= d
    return n


def nested_if(depth):
    """If nodes nested `depth` deep, each on a condition that is a graph input (not a constant):
    every level has a costly then_branch (the next If and an Add) and a cheap else_branch."""
    def branch_graphs(level):
        out_then, out_else = f"t{level}", f"e{level}"
        then_nodes = []
        src = "x"
        if level < depth:
            then_nodes.append(make_if(level + 1))
            src = f"y{level + 1}"
        then_nodes.append(helper.make_node("Add", [src, "x"], [out_then], name=f"add{level}"))
        then_g = helper.make_graph(then_nodes, f"then{level}", [], [vi(out_then, [4, 8])])
        else_g = helper.make_graph([helper.make_node("Relu", ["x"], [out_else], name=f"relu{level}")],
                                   f"else{level}", [], [vi(out_else, [4, 8])])
        return then_g, else_g

    def make_if(level):
        then_g, else_g = branch_graphs(level)
        return helper.make_node("If", ["cond"], [f"y{level}"], name=f"if{level}",
                                then_branch=then_g, else_branch=else_g)

    save_model(f"nested_if_{depth}", [make_if(1)], [vi("x", [4, 8]), vi("cond", [], TensorProto.BOOL)],
               [vi("y1", [4, 8])])


def loop_model(name, trips, nested=False):
    """Loop with a constant trip count whose body adds v to itself (a nested Loop inside the body
    when `nested`, with the same trip count)."""
    def body(tag, inner):
        nodes = [helper.make_node("Identity", [f"cond_in{tag}"], [f"cond_out{tag}"], name=f"id{tag}")]
        src = f"v_in{tag}"
        if inner:
            nodes.append(helper.make_node("Loop", ["M", "", src], [f"w{tag}"], name=f"loop{tag}i",
                                          body=body(tag + "i", False)))
            src = f"w{tag}"
        nodes.append(helper.make_node("Add", [src, src], [f"v_out{tag}"], name=f"add{tag}"))
        return helper.make_graph(nodes, f"body{tag}",
                                 [vi(f"iter{tag}", [], TensorProto.INT64), vi(f"cond_in{tag}", [], TensorProto.BOOL),
                                  vi(f"v_in{tag}", [4, 8])],
                                 [vi(f"cond_out{tag}", [], TensorProto.BOOL), vi(f"v_out{tag}", [4, 8])])
    save_model(name, [helper.make_node("Loop", ["M", "", "v0"], ["v"], name="loop0", body=body("0", nested))],
               [vi("v0", [4, 8])], [vi("v", [4, 8])], [const_i64("M", [trips], [])])


def make_models():
    nested_if(31)
    loop_model("loop_trip_2p62", BIG)
    loop_model("loop_trip_2p62_nested", BIG, nested=True)
    loop_model("loop_trip_0", 0)
    conv_model("conv_stride0", [1, 3, 8, 8], [4, 3, 3, 3], strides=[0, 0])
    conv_model("conv_stride_negative", [1, 3, 8, 8], [4, 3, 3, 3], strides=[-1, 1])
    conv_model("conv_group0", [1, 3, 8, 8], [4, 3, 3, 3], group=0)
    conv_model("conv_group_mismatch", [1, 4, 8, 8], [4, 3, 3, 3], group=2)
    conv_model("conv_dilation0", [1, 3, 8, 8], [4, 3, 3, 3], dilations=[0, 1])
    conv_model("conv_kernel_too_large", [1, 3, 4, 4], [4, 3, 7, 7])
    conv_model("conv_huge_dilation", [1, 3, 8, 8], [4, 3, 3, 3], dilations=[BIG, BIG])
    conv_model("conv_huge_pads", [1, 3, 8, 8], [4, 3, 3, 3], pads=[BIG, BIG, BIG, BIG])
    save_model("transpose_repeated_perm", [helper.make_node("Transpose", ["x"], ["y"], name="tr0", perm=[0, 0, 1])],
               [vi("x", [2, 3, 4])], [vi("y", None)])
    save_model("squeeze_non1", [helper.make_node("Squeeze", ["x", "axes"], ["y"], name="sq0")],
               [vi("x", [2, 3])], [vi("y", None)], [const_i64("axes", [0])])
    save_model("maxpool_negative_kernel",
               [helper.make_node("MaxPool", ["x"], ["y"], name="pool0", kernel_shape=[-3, -3])],
               [vi("x", [1, 3, 8, 8])], [vi("y", None)])
    save_model("range_float_overflow", [helper.make_node("Range", ["s", "l", "d"], ["y"], name="range0")],
               [], [vi("y", None)],
               [const_f32("s", [0.0], []), const_f32("l", [1e30], []), const_f32("d", [1.0], [])])
    save_model("huge_dims_concat", [helper.make_node("Concat", ["x", "x"], ["y"], name="cat0", axis=0)],
               [vi("x", [BIG, 8])], [vi("y", None)])
    save_model("pad_overflow", [helper.make_node("Pad", ["x", "pads"], ["y"], name="pad0")],
               [vi("x", [BIG, 8])], [vi("y", None)], [const_i64("pads", [BIG, 0, BIG, 0])])
    save_model("depth_to_space_blocksize0",
               [helper.make_node("DepthToSpace", ["x"], ["y"], name="d2s0", blocksize=0)],
               [vi("x", [1, 16, 4, 4])], [vi("y", None)])
    save_model("depth_to_space_indivisible",
               [helper.make_node("DepthToSpace", ["x"], ["y"], name="d2s1", blocksize=2)],
               [vi("x", [1, 18, 4, 4])], [vi("y", None)])
    save_model("space_to_depth_blocksize0",
               [helper.make_node("SpaceToDepth", ["x"], ["y"], name="s2d0", blocksize=0)],
               [vi("x", [1, 3, 4, 4])], [vi("y", None)])
    save_model("space_to_depth_indivisible",
               [helper.make_node("SpaceToDepth", ["x"], ["y"], name="s2d1", blocksize=2)],
               [vi("x", [1, 3, 5, 4])], [vi("y", None)])
    # An op type ftax neither counts nor prices, 1 of 3 ops: counted as 0 with a warning at the
    # top of the output, refused with --strict.
    save_model("unknown_op_one_of_three",
               [helper.make_node("Relu", ["x"], ["a"], name="relu0"),
                helper.make_node("Relu", ["a"], ["b"], name="relu1"),
                helper.make_node("MysteryOp", ["b"], ["y"], name="mystery0")],
               [vi("x", [1, 8])], [vi("y", [1, 8])])
    # A model name that tries to break out of the gnuplot title string.
    shutil.copy(os.path.join(ROOT, "tests/data/onnx/tiny_mlp.onnx"),
                os.path.join(CASES, "quote';system('" + INJECT + "');'.onnx"))


# ---- profiles ----------------------------------------------------------------------------------

def base_profile():
    """data/profiles/h200.json without its anchors, measured ranges, fit and provenance: small,
    and what the predictor reads."""
    with open(os.path.join(ROOT, "data/profiles/h200.json")) as f:
        p = json.load(f)
    for k in p["gpu"]["kernels"].values():
        k.pop("anchors", None)
        k.pop("range", None)
    p["fit"] = {}
    p["provenance"] = {"notes": "hostile-input test case made by tests/hostile/make_cases.py from data/profiles/h200.json"}
    p["host"] = {"gpu": p["host"].get("gpu", "H200")}
    return p


PREDICT = ["predict", "--arch", "bert:layers=1", "--dim", "seq=16", "--batch", "1,2", "--framework",
           "pytorch-eager,cuda-graph", "--precision", "fp16"]


def make_profiles():
    write_json("profile_ok.json", base_profile())

    def mutated(name, edit, expect_rc, expect_err):
        p = base_profile()
        edit(p)
        write_json(name + ".json", p)
        case("profile_" + name, PREDICT + ["--profile", "{cases}/" + name + ".json"], expect_rc, expect_err)

    def set_param(path, value):
        def edit(p):
            node = p
            for k in path[:-1]:
                node = node[k]
            node[path[-1]] = value
        return edit

    mutated("cost_1e308", set_param(["gpu", "kernels", "gemm/fp16", "floor_us", "value"], 1e308), 2,
            ["gpu.kernels.gemm/fp16.floor_us", "out of range"])
    mutated("rate_tiny", set_param(["gpu", "kernels", "gemm/fp16", "rate_tflops", "value"], 1e-300), 2,
            ["gpu.kernels.gemm/fp16.rate_tflops"])
    mutated("bandwidth_huge", set_param(["gpu", "kernels", "elementwise/fp16", "bandwidth_gbps", "value"], 1e300), 2,
            ["bandwidth_gbps", "out of range"])
    mutated("kernel_gap_negative", set_param(["gpu", "kernel_gap_us"], {"value": -3.0, "stderr": None, "unit": "us"}),
            2, ["gpu.kernel_gap_us: must be >= 0"])
    mutated("call_cost_1e308", set_param(["frameworks", "pytorch-eager", "call_us", "value"], 1e308), 2,
            ["frameworks.pytorch-eager.call_us", "out of range"])
    mutated("dispatch_negative", set_param(["frameworks", "cuda-graph", "dispatch_us", "kernel", "value"], -1.0), 2,
            ["frameworks.cuda-graph.dispatch_us.kernel: must be >= 0"])
    mutated("node_gap_negative", set_param(["frameworks", "cuda-graph", "node_gap_us", "value"], -0.5), 2,
            ["frameworks.cuda-graph.node_gap_us: must be >= 0"])
    mutated("stderr_negative", set_param(["frameworks", "cuda-graph", "call_us", "stderr"], -1.0), 2,
            ["call_us.stderr"])
    mutated("tile_float_1e30", set_param(["gpu", "kernels", "gemm/fp16", "tile_m"], 1e30), 2,
            ["tile_m: expected an integer"])
    mutated("num_sms_zero", set_param(["gpu", "num_sms"], 0), 2, ["gpu.num_sms"])
    mutated("anchor_m_float", set_param(["gpu", "kernels", "gemm/fp16", "anchors"],
                                        [{"m": 1e30, "n": 8, "k": 8, "flops": 1e3, "bytes": 1e3, "us": 5}]),
            2, ["anchors[0].m: expected an integer"])
    mutated("host_gpu_number", set_param(["host", "gpu"], 7), 2, ["host.gpu must be a string"])
    # Text that would run a command if it reached gnuplot (or a shell) as code.
    inj = base_profile()
    inj["host"]["gpu"] = "H200' . system('" + INJECT + "') . '`" + INJECT + "`\n!" + INJECT + "\n"
    write_json("profile_gpu_injection.json", inj)
    case("plot_profile_gpu_injection", PREDICT + ["--profile", "{cases}/profile_gpu_injection.json", "--plot", "out.svg"],
         0, ["plot: out.svg"], creates=["out.svg"], needs=["gnuplot"])
    case("plot_path_injection", PREDICT + ["--profile", "{cases}/profile_ok.json", "--plot", "x';" + INJECT + ";'.svg"],
         0, ["plot: x'"], creates=["x';" + INJECT + ";'.svg"], needs=["gnuplot"])
    case("plot_model_name_injection",
         ["predict", "{cases}/quote';system('" + INJECT + "');'.onnx", "--profile", "{cases}/profile_ok.json",
          "--batch", "1,2", "--framework", "cuda-graph", "--plot", "out.png"],
         0, ["plot: out.png"], creates=["out.png"], needs=["gnuplot"])
    # --plot used to write PATH.dat and PATH.gp and then delete them.
    case("plot_keeps_user_files", PREDICT + ["--profile", "{cases}/profile_ok.json", "--plot", "out.svg"], 0, [],
         creates=["out.svg"], setup={"victims": {"out.svg.dat": "user data\n", "out.svg.gp": "user script\n"}},
         needs=["gnuplot"])
    case("plot_over_profile", PREDICT + ["--profile", "p.json", "--plot", "p.json"], 2,
         ["--plot 'p.json' is also an input"], setup={"copies": {"p.json": "{cases}/profile_ok.json"}})
    case("plot_into_directory", PREDICT + ["--profile", "{cases}/profile_ok.json", "--plot", "d"], 2,
         ["--plot 'd' is a directory"], setup={"dirs": ["d"]})


# ---- measured rows (validate --measured) -------------------------------------------------------

def row(**over):
    r = {"model": "bert-tiny", "arch": "bert:layers=1", "framework": "cuda-graph", "precision": "fp16", "batch": 1,
         "seq": 16, "latency_ms": {"median": 0.5, "p10": 0.45, "p90": 0.6}, "kernel_ms": 0.2,
         "kernels_per_iter": 20.0}
    r.update(over)
    return r


def rows_file(name, rows):
    write_json(name + ".json", {"schema_version": 1, "kind": "ftax-validation-measurements", "rows": rows})


VALIDATE = ["validate", "--profile", "{cases}/profile_ok.json", "--measured"]


def make_rows():
    rows_file("rows_ok", [row(), row(batch=2, latency_ms={"median": 0.6, "p10": 0.55, "p90": 0.7})])
    for name, rows, err in [
        ("rows_latency_zero", [row(latency_ms={"median": 0.0, "p10": 0.0, "p90": 0.0})], "latency_ms.median: must be > 0"),
        ("rows_latency_negative", [row(latency_ms={"median": -1.0, "p10": -1.0, "p90": -1.0})], "latency_ms.median: must be > 0"),
        ("rows_latency_huge", [row(latency_ms={"median": 1e300, "p10": 1e300, "p90": 1e300})], "out of range"),
        ("rows_quantiles_swapped", [row(latency_ms={"median": 0.5, "p10": 0.9, "p90": 0.1})], "quantiles out of order"),
        ("rows_kernel_ms_negative", [row(kernel_ms=-3.0)], "kernel_ms: must be >= 0"),
        ("rows_batch_zero", [row(batch=0)], "batch: must be between 1"),
        ("rows_batch_float", [row(batch=1e30)], "batch: expected an integer"),
        ("rows_kernels_not_numbers", [row(kernels={"k": ["a", "b"]})], "kernels.k: entries must be finite numbers"),
    ]:
        rows_file(name, rows)
        case(name, VALIDATE + ["{cases}/" + name + ".json"], 2, [name + ".json' rows[0]", err])
    rows_file("rows_all_skipped", [row(framework="tensorflow"), row(precision="fp7")])
    case("rows_all_skipped", VALIDATE + ["{cases}/rows_all_skipped.json"], 2,
         ["nothing to compare: every one of the 2 measured rows was skipped"])
    rows_file("rows_empty", [])
    case("rows_empty", VALIDATE + ["{cases}/rows_empty.json"], 2, ["nothing to compare: there are no measured rows"])
    rows_file("rows_model_injection", [row(model="bert' . system('" + INJECT + "') . '"),
                                       row(model="x`" + INJECT + "`", batch=2)])
    case("plot_row_model_injection", VALIDATE + ["{cases}/rows_model_injection.json", "--plot", "v.svg"], 0,
         ["plot: v.svg"], creates=["v.svg"], needs=["gnuplot"])
    # Outputs that must be refused or fail cleanly.
    case("validate_output_directory", VALIDATE + ["{cases}/rows_ok.json", "-o", "d"], 2, ["'d' is a directory"],
         setup={"dirs": ["d"]})
    case("validate_output_is_input", ["validate", "--profile", "{cases}/profile_ok.json", "--measured", "rows.json",
                                      "-o", "rows.json"], 2, ["-o 'rows.json' is also an input"],
         setup={"copies": {"rows.json": "{cases}/rows_ok.json"}})
    case("validate_refined_is_profile", ["validate", "--profile", "p.json", "--measured", "{cases}/rows_ok.json",
                                         "--refined-profile", "p.json"], 2, ["--refined-profile 'p.json' is also an input"],
         setup={"copies": {"p.json": "{cases}/profile_ok.json"}})
    case("validate_output_full_disk", VALIDATE + ["{cases}/rows_ok.json", "-o", "/dev/full"], 1,
         ["'/dev/full'", "No space left on device"])
    case("validate_refined_full_disk", VALIDATE + ["{cases}/rows_ok.json", "--refined-profile", "/dev/full"], 1,
         ["'/dev/full'", "No space left on device"])
    # A file too large for the limit (ulimit -f): the old file stays, no temporary file is left.
    case("validate_output_write_fails_keeps_old", VALIDATE + ["{cases}/rows_ok.json", "-o", "report.json"], 1,
         ["'report.json' failed", "File too large"],
         setup={"victims": {"report.json": "the report of an earlier run\n"}, "fsize_bytes": 4096})
    case("validate_output_written", VALIDATE + ["{cases}/rows_ok.json", "-o", "report.json"], 0, [],
         creates=["report.json"])
    case("profile_is_directory", ["validate", "--profile", "p", "--measured", "{cases}/rows_ok.json"], 2,
         ["profile 'p' is a directory"], setup={"dirs": ["p"]})
    case("profile_is_fifo", ["validate", "--profile", "p.json", "--measured", "{cases}/rows_ok.json"], 2,
         ["profile 'p.json' is a FIFO"], setup={"fifos": ["p.json"]}, timeout_s=10)
    case("measured_is_fifo", ["validate", "--profile", "{cases}/profile_ok.json", "--measured", "m.json"], 2,
         ["measurements 'm.json' is a FIFO"], setup={"fifos": ["m.json"]}, timeout_s=10)


# ---- measurement files (calibrate) -------------------------------------------------------------

SYNTHETIC = "{root}/tests/data/measurements/synthetic-h200like.measurements.json"


def make_measurements():
    with open(os.path.join(ROOT, "tests/data/measurements/synthetic-h200like.measurements.json")) as f:
        m = json.load(f)
    no_kernels = {k: m[k] for k in ("schema_version", "kind", "host")}
    no_kernels["dispatch"] = m["dispatch"][:4]
    write_json("measurements_no_kernels.json", no_kernels)
    case("calibrate_no_kernels", ["calibrate", "{cases}/measurements_no_kernels.json", "-o", "p.json"], 2,
         ["hold no kernel rows"], needs=["ceres"])
    for name, edit, err in [
        ("measurements_kernel_us_1e308", lambda r: r["kernel_us"].update(median=1e308, p10=1e308, p90=1e308),
         "kernel_us.median: 1e+308 is out of range"),
        # JSON has no infinity: 1e999 is refused by the parser as a number overflow.
        ("measurements_flops_inf", lambda r: r.update(flops=1e999), "number overflow parsing '1e999'"),
        ("measurements_m_huge", lambda r: r.update(m=1 << 62), "m: 4611686018427387904 is out of range"),
    ]:
        one = {k: m[k] for k in ("schema_version", "kind", "host")}
        r = json.loads(json.dumps(m["kernels"][0]))
        edit(r)
        one["kernels"] = [r]
        with open(os.path.join(CASES, name + ".json"), "w") as f:
            f.write(json.dumps(one, separators=(",", ":")).replace("Infinity", "1e999") + "\n")
        case(name, ["calibrate", "{cases}/" + name + ".json", "-o", "p.json"], 2, [err], needs=["ceres"])
    case("calibrate_output_is_input", ["calibrate", "m.json", "-o", "m.json", "--force"], 2,
         ["-o 'm.json' is also an input"], setup={"copies": {"m.json": SYNTHETIC}}, needs=["ceres"])
    case("calibrate_output_full_disk", ["calibrate", SYNTHETIC, "-o", "/dev/full"], 1,
         ["'/dev/full'", "No space left on device"], needs=["ceres"], timeout_s=120)
    case("calibrate_write_fails_keeps_old", ["calibrate", SYNTHETIC, "-o", "victim.json"], 1,
         ["'victim.json' failed", "File too large"],
         setup={"victims": {"victim.json": "an earlier profile\n"}, "fsize_bytes": 8192}, needs=["ceres"],
         timeout_s=120)
    arch = "bert:layers=12,hidden=768,heads=12,ffn=3072"
    traces = []
    for b in (1, 32):
        traces += ["--from-trace", "{root}/tests/data/traces/h200-bert-base-fp16-b%d.trimmed.trace.json;name=bert-base;"
                   "arch=%s;batch=%d;seq=128;precision=fp16" % (b, arch, b)]
    case("from_trace_output_full_disk", ["calibrate", "--profile", "{root}/data/profiles/h200.json", "-o", "/dev/full",
                                         "--min-rows", "2"] + traces, 1, ["'/dev/full'", "No space left on device"])
    case("from_trace_output_is_profile", ["calibrate", "--profile", "p.json", "-o", "p.json", "--min-rows", "2"] + traces,
         2, ["-o 'p.json' is also an input"], setup={"copies": {"p.json": "{root}/data/profiles/h200.json"}})
    case("from_trace_write_fails_keeps_old", ["calibrate", "--profile", "{root}/data/profiles/h200.json", "-o", "old.json",
                                              "--min-rows", "2"] + traces, 1, ["'old.json' failed", "File too large"],
         setup={"victims": {"old.json": "an earlier refined profile\n"}, "fsize_bytes": 8192})
    case("calibrate_output_directory", ["calibrate", SYNTHETIC, "-o", "d"], 2, ["'d' is a directory"],
         setup={"dirs": ["d"]}, needs=["ceres"])


# ---- models (inspect) ---------------------------------------------------------------------------

def make_model_cases():
    def inspect(name, strict_rc, strict_err, loose_rc=0, loose_err=(), loose_out=()):
        path = "{cases}/" + name + ".onnx"
        case("inspect_strict_" + name, ["inspect", path, "--strict"], strict_rc, strict_err)
        case("inspect_" + name, ["inspect", path, "--format", "json"], loose_rc, loose_err, loose_out)

    inspect("conv_stride0", 2, ["node 'conv0' (Conv): invalid: stride 0 must be > 0"],
            loose_out=["node 'conv0' (Conv): invalid: stride 0"])
    inspect("conv_stride_negative", 2, ["node 'conv0' (Conv): invalid: stride -1 must be > 0"])
    inspect("conv_group0", 2, ["node 'conv0' (Conv): invalid: group 0 must be >= 1"])
    inspect("conv_group_mismatch", 2, ["node 'conv0' (Conv): invalid: input has 4 channels"])
    inspect("conv_dilation0", 2, ["node 'conv0' (Conv): invalid: dilation 0 must be > 0"])
    inspect("conv_kernel_too_large", 2, ["node 'conv0' (Conv): invalid: spatial dim 0: kernel (7 with dilation) "
                                         "is larger than the padded input (4)"],
            loose_out=["is larger than the padded input"])
    inspect("conv_huge_dilation", 2, ["node 'conv0' (Conv): invalid: spatial dim 0: dilated kernel size overflows"])
    inspect("conv_huge_pads", 2, ["node 'conv0' (Conv): invalid: pads overflow"])
    inspect("transpose_repeated_perm", 2, ["node 'tr0' (Transpose): invalid: perm names axis 0 twice"])
    inspect("squeeze_non1", 2, ["node 'sq0' (Squeeze): invalid: cannot squeeze axis 0 of size 2"])
    inspect("maxpool_negative_kernel", 2, ["node 'pool0' (MaxPool): invalid: kernel_shape -3 must be > 0"])
    inspect("range_float_overflow", 2, ["node 'range0' (Range): invalid: start/limit/delta give"])
    inspect("huge_dims_concat", 2, ["node 'cat0' (Concat): invalid: concatenated size overflows int64"])
    inspect("pad_overflow", 2, ["node 'pad0' (Pad): invalid: padded size overflows int64"])
    inspect("depth_to_space_blocksize0", 2, ["node 'd2s0' (DepthToSpace): invalid: blocksize 0 is out of range"])
    inspect("depth_to_space_indivisible", 2,
            ["node 'd2s1' (DepthToSpace): invalid: blocksize 2: its square 4 does not divide the 18 input channels"])
    inspect("space_to_depth_blocksize0", 2, ["node 's2d0' (SpaceToDepth): invalid: blocksize 0 is out of range"])
    inspect("space_to_depth_indivisible", 2,
            ["node 's2d1' (SpaceToDepth): invalid: blocksize 2 does not divide input dim 2 (5)"])
    case("inspect_unknown_op_warns", ["inspect", "{cases}/unknown_op_one_of_three.onnx"], 0, [],
         ["warning: 1 of 3 ops (33.3%) are not counted, so MACs and FLOPs are a lower bound: MysteryOp (1)"])
    case("inspect_unknown_op_strict", ["inspect", "{cases}/unknown_op_one_of_three.onnx", "--strict"], 2,
         ["MysteryOp"])
    case("predict_unknown_op_strict", ["predict", "{cases}/unknown_op_one_of_three.onnx", "--profile",
                                       "{cases}/profile_ok.json", "--batch", "1", "--framework", "cuda-graph",
                                       "--strict"], 2, ["op types ftax cannot price: MysteryOp (1 nodes)"])
    case("predict_unknown_op_warns", ["predict", "{cases}/unknown_op_one_of_three.onnx", "--profile",
                                      "{cases}/profile_ok.json", "--batch", "1", "--framework", "cuda-graph",
                                      "--format", "json"], 0, [], ["\"unpriced_ops\": {", "\"MysteryOp\": 1"])
    case("compare_unknown_op_strict", ["compare", "{cases}/unknown_op_one_of_three.onnx",
                                       "{cases}/unknown_op_one_of_three.onnx", "--profile", "{cases}/profile_ok.json",
                                       "--batch", "1", "--framework", "cuda-graph", "--strict"], 2,
         ["op types ftax cannot price: MysteryOp (1 nodes)"])
    case("compare_unknown_op_warns", ["compare", "{cases}/unknown_op_one_of_three.onnx",
                                      "{cases}/unknown_op_one_of_three.onnx", "--profile", "{cases}/profile_ok.json",
                                      "--batch", "1", "--framework", "cuda-graph", "--format", "json"], 0, [],
         ["\"unpriced_ops\": {", "\"MysteryOp\": 1"])
    # Work bounded by the model's size: 31 nested Ifs walk in well under the time limit.
    case("inspect_nested_if_31", ["inspect", "{cases}/nested_if_31.onnx", "--format", "json"], 0, [],
         ["\"ops\": 62,", "If node 'if31': condition is not a constant"], timeout_s=20)
    # 2^62 trips: ops stay positive (2 body ops x 2^62 saturate at the int64 maximum, with a note).
    case("inspect_loop_trip_2p62", ["inspect", "{cases}/loop_trip_2p62.onnx", "--format", "json"], 0, [],
         ["\"ops\": 9223372036854775807", "counts exceed the int64 range"])
    case("inspect_loop_trip_2p62_nested", ["inspect", "{cases}/loop_trip_2p62_nested.onnx", "--format", "json"], 0,
         [], ["\"ops\": 9223372036854775807", "counts exceed the int64 range"])
    # 0 trips: the body never runs; only the Loop node itself counts.
    case("inspect_loop_trip_0", ["inspect", "{cases}/loop_trip_0.onnx", "--format", "json"], 0, [],
         ["\"ops\": 1,", "\"flops\": 0,"])
    # predict cannot price an invalid node: exit 2 naming it, not a hint about unbound dims.
    for name, node in [("conv_stride0", "node 'conv0' (Conv): invalid: stride 0"),
                       ("depth_to_space_blocksize0", "node 'd2s0' (DepthToSpace): invalid: blocksize 0"),
                       ("pad_overflow", "node 'pad0' (Pad): invalid:")]:
        case("predict_" + name, ["predict", "{cases}/" + name + ".onnx", "--profile", "{cases}/profile_ok.json",
                                 "--batch", "1", "--framework", "cuda-graph"], 2, [node])
    # Loops with huge trip counts and deep Ifs still predict (finite numbers, no crash).
    for name in ("loop_trip_2p62_nested", "nested_if_31"):
        case("predict_" + name, ["predict", "{cases}/" + name + ".onnx", "--profile", "{cases}/profile_ok.json",
                                 "--batch", "1,2", "--framework", "cuda-graph,pytorch-eager", "--format", "json"],
             0, [], ["\"latency_ms\""], timeout_s=20)
    case("inspect_model_is_fifo", ["inspect", "model.onnx"], 2, ["model.onnx: not a regular file"],
         setup={"fifos": ["model.onnx"]}, timeout_s=10)
    case("inspect_model_is_directory", ["inspect", "d"], 2, ["d: is a directory"], setup={"dirs": ["d"]})


def main():
    if os.path.isdir(CASES):
        shutil.rmtree(CASES)
    os.makedirs(CASES)
    make_models()
    make_model_cases()
    make_profiles()
    make_rows()
    make_measurements()
    names = [c["name"] for c in cases]
    assert len(names) == len(set(names)), "case names must be unique"
    with open(os.path.join(HERE, "cases.json"), "w") as f:
        json.dump({"generated_by": "tests/hostile/make_cases.py", "cases": cases}, f, indent=1)
        f.write("\n")
    size = sum(os.path.getsize(os.path.join(CASES, n)) for n in os.listdir(CASES))
    print(f"{len(cases)} cases, {len(os.listdir(CASES))} files ({size} bytes) in {CASES}")


if __name__ == "__main__":
    main()
