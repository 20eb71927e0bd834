#!/usr/bin/env python3
"""tune --emit-best end to end (run by ctest; stdlib only): the files ppsched tune writes for the
best candidate of a --gpus search and of a --ranks tune, read as the frameworks read them.

  ppsched_torchtitan_config.py  ast.parse, then its assignments: the degrees, whose product must
                                be the GPU count, and the schedule CSV, which must validate
  run_torchtitan.sh             shlex.split: NGPU and CONFIG, then options each in
                                tests/data/torchtitan_options.tsv (the frozen torchtitan names)
  run_megatron.sh               shlex.split, then argparse (allow_abbrev=False) built from
                                tests/data/megatron_options.tsv; the batch over pp x tp x dp
  torchtitan.toml               tomllib (the older config system, a tune without a model)

  emit_best_test.py PPSCHED TESTS_DATA_DIR
"""
import argparse
import ast
import os
import shlex
import subprocess
import sys
import tempfile
import tomllib

PPSCHED, DATA = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
ROOT = os.path.dirname(os.path.dirname(DATA))  # tests/data -> the checkout
sys.path.insert(0, DATA)
from option_tables import megatron_parser, read_tsv  # noqa: E402
failures = []


def command_of(path):
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    body = [line for line in lines if line and not line.startswith("#")]
    if len(body) != 1:
        failures.append(f"{path}: {len(body)} command lines, not 1")
        return []
    return shlex.split(body[0])


def run(args, cwd):
    return subprocess.run([PPSCHED] + args, cwd=cwd, capture_output=True, text=True, timeout=300)


def check_gpus(model, gpus, batch, root):
    out = os.path.join(root, f"{model}-{gpus}")
    p = run(["tune", "--gpus", str(gpus), "--global-batch", str(batch), "--model", f"schedules/{model}.model.json",
             "--gpu", "h100", "--emit-best", out], ROOT)
    case = f"{model} on {gpus} GPUs"
    if p.returncode != 0:
        failures.append(f"{case}: exit {p.returncode}: {p.stderr[-400:]}")
        return
    # torchtitan: the registry module's degrees make the GPUs, its CSV validates.
    with open(os.path.join(out, "ppsched_torchtitan_config.py"), "rb") as f:
        tree = ast.parse(f.read())
    values = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Attribute):
            try:
                values[ast.unparse(node.targets[0])] = ast.literal_eval(node.value)
            except ValueError:
                values[ast.unparse(node.targets[0])] = ast.unparse(node.value)

    def par(field):
        return values.get(f"config.parallelism.{field}", 1)

    product = par("pipeline_parallel_degree") * par("tensor_parallel_degree") * \
        par("data_parallel_shard_degree") * par("data_parallel_replicate_degree")
    if product != gpus:
        failures.append(f"{case}: torchtitan's degrees make {product} GPUs, not {gpus}")
    csv = values.get("config.parallelism.pipeline_parallel_schedule_csv")
    if csv:
        v = subprocess.run([PPSCHED, "validate", csv], capture_output=True, text=True)
        if v.returncode != 0:
            failures.append(f"{case}: the schedule CSV does not validate: {v.stderr[-300:]}")
    frozen = {r["option"] for r in read_tsv(DATA, "torchtitan_options.tsv")}
    argv = command_of(os.path.join(out, "run_torchtitan.sh"))
    env = dict(a.split("=", 1) for a in argv if "=" in a and not a.startswith("-"))
    if env.get("NGPU") != str(gpus) or env.get("CONFIG") != "ppsched_best":
        failures.append(f"{case}: run_torchtitan.sh sets {env}")
    for o in (a for a in argv if a.startswith("--")):
        name = o[2:].replace(".no_", ".", 1)
        if name not in frozen:
            failures.append(f"{case}: torchtitan has no option {o}")
    # Megatron: argparse from its option table; the batch in microbatches over the replicas.
    margv = command_of(os.path.join(out, "run_megatron.sh"))
    args = [a for a in margv[margv.index("pretrain_gpt.py") + 1:] if a != "$@"]
    try:
        ns, rest = megatron_parser(DATA).parse_known_args(args)
    except argparse.ArgumentError as e:
        failures.append(f"{case}: Megatron's parser refuses the arguments: {e}")
        return
    if rest:
        failures.append(f"{case}: options Megatron does not have: {rest}")
    dp = gpus // (ns.pipeline_model_parallel_size * ns.tensor_model_parallel_size)
    if ns.global_batch_size != batch or ns.global_batch_size % (ns.micro_batch_size * dp):
        failures.append(f"{case}: Megatron's batch {ns.global_batch_size} is not {batch} in microbatches of "
                        f"{ns.micro_batch_size} over {dp} replicas")


def check_toml(root):
    out = os.path.join(root, "toml")
    p = run(["tune", "--ranks", "4", "--global-batch", "8", "--cost", "F=1000,B=2000,W=1000", "--emit-best", out],
            root)
    if p.returncode != 0:
        failures.append(f"a tune without a model: exit {p.returncode}: {p.stderr[-300:]}")
        return
    with open(os.path.join(out, "torchtitan.toml"), "rb") as f:
        parsed = tomllib.load(f)
    if set(parsed) != {"parallelism", "training"}:
        failures.append(f"torchtitan.toml has tables {sorted(parsed)}")


with tempfile.TemporaryDirectory() as root:
    check_gpus("llama3-70b", 64, 256, root)
    check_gpus("llama3-8b", 8, 64, root)
    check_gpus("deepseek-v3-like", 512, 1024, root)
    check_toml(root)
    # A model torchtitan has no registry function for needs one named, before anything is written.
    mixtral = os.path.join(root, "mixtral")
    p = run(["tune", "--gpus", "64", "--global-batch", "256", "--model", "schedules/mixtral-8x7b.model.json",
             "--gpu", "h100", "--emit-best", mixtral], ROOT)
    if p.returncode != 2 or "--torchtitan-config" not in p.stderr or \
            os.path.exists(os.path.join(mixtral, "run_megatron.sh")):
        failures.append(f"mixtral without --torchtitan-config: exit {p.returncode}, {p.stderr[-300:]}")

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
