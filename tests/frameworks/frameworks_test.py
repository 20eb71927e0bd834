#!/usr/bin/env python3
"""The framework faces read as the frameworks read them (run by ctest; stdlib only).

ppsched_emit_settings writes, for sample runs (tests/support/run_settings_samples.hpp) with plain
and hostile model names, comments and schedule paths, what `tune --emit-best` will write for
torchtitan (b5bcd76c) and Megatron-LM (d98e8a64). Each file is then checked here by the rules of
the program that reads it, written anew from the frameworks' sources, not from ppsched's code:

  megatron_args       argparse (allow_abbrev=False) built from tests/data/megatron_options.tsv,
                      then Megatron's validate_args / TransformerConfig rules on the values, and
                      the pipeline layout parsed by Megatron's grammar
  overrides           each option in tests/data/torchtitan_options.tsv (the frozen names), with
                      or without a value as its type says, the AC subcommand token last; then
                      torchtitan's checks (degrees x = GPUs, EP within FSDP x TP, token counts)
  registry (.py)      ast.parse of its bytes (so an encoding declaration would count), every
                      assignment's target and literal value, the imports; then run against stub
                      torchtitan modules whose config sections accept only the table's fields
  run_*.sh            comment lines, then one command that shlex.split gives back as the
                      argument list; and run by sh against stub run_train.sh / torchrun that
                      record the argv they get, byte for byte, with no command substituted
  torchtitan.toml     tomllib (the older TOML face), or its refusal for a path TOML cannot hold

  frameworks_test.py EMIT_SETTINGS_BINARY TESTS_DATA_DIR
"""
import argparse
import ast
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import tomllib

TOOL, DATA = sys.argv[1], sys.argv[2]
sys.path.insert(0, DATA)
from option_tables import megatron_parser, read_tsv  # noqa: E402
failures = []
AC_CLASSES = {"selective": "SelectiveAC", "full": "FullAC"}


def fail(case, message):
    failures.append(f"{case}: {message}")


TORCHTITAN = {r["option"]: r for r in read_tsv(DATA, "torchtitan_options.tsv")}


def read_args(path):
    with open(path, "rb") as f:
        data = f.read()
    assert data.endswith(b"\0") or not data
    return [os.fsdecode(a) for a in data.split(b"\0")[:-1]]


# ---- Megatron-LM ----

def megatron_layout(text):
    """Megatron's layout grammar (pipeline_parallel_layer_layout.py): commas are cosmetic, (..)*n
    and x*n repeat, '|' ends a stage."""
    text = text.replace(",", "")
    text = re.sub(r"\(([^)]+)\)\*(\d+)", lambda m: m.group(1) * int(m.group(2)), text)
    text = re.sub(r"(.)\*(\d+)", lambda m: m.group(1) * int(m.group(2)), text)
    if set(text) - set("EtmL|"):
        raise ValueError(f"a character outside E t m L | in {text!r}")
    return text.split("|")


def check_megatron(case, args, st):
    try:
        ns, extra = megatron_parser(DATA).parse_known_args(args)
    except (argparse.ArgumentError, SystemExit) as e:
        return fail(case, f"Megatron's parser rejects the arguments: {e}")
    if extra:
        return fail(case, f"options Megatron does not have: {extra}")
    tp, pp, world = ns.tensor_model_parallel_size, ns.pipeline_model_parallel_size, st["gpus"]
    if world % (tp * pp):
        fail(case, "world size not a multiple of tp x pp")
    dp = world // (tp * pp)
    heads, hidden = ns.num_attention_heads, ns.hidden_size
    if heads % tp or hidden % heads:
        fail(case, "heads not a multiple of tp, or hidden not of heads")
    groups = ns.num_query_groups if ns.group_query_attention else heads
    if groups % tp and tp % groups:
        fail(case, "query groups neither a multiple nor a divisor of tp")
    mbs, gbs = ns.micro_batch_size, ns.global_batch_size
    if gbs % (mbs * dp) or gbs // (mbs * dp) != st["microbatches"]:
        fail(case, f"global batch {gbs} gives {gbs / (mbs * dp)} microbatches, not {st['microbatches']}")
    if ns.pipeline_model_parallel_layout is not None:
        stages = megatron_layout(ns.pipeline_model_parallel_layout)
        flat = "".join(stages)
        if len(stages) % pp or flat[0] != "E" or flat[-1] != "L" or flat.count("E") != 1 or flat.count("L") != 1:
            fail(case, f"layout breaks Megatron's rules: {ns.pipeline_model_parallel_layout}")
        if flat.count("t") != ns.num_layers or (len(stages) // pp > 1 and pp < 2):
            fail(case, "layout's blocks or interleaving do not fit")
        if stages != st["stage_layers"]:  # ppsched's stage order is Megatron's virtual order
            fail(case, "layout is not the settings' stages")
    else:
        per = ns.num_layers // pp
        default = ["E" * (r == 0) + "t" * per + "L" * (r == pp - 1) for r in range(pp)]
        if ns.num_layers % pp or st["stages_per_rank"] != 1 or default != st["stage_layers"]:
            fail(case, "no layout, yet the stages are not Megatron's even split")
    if ns.recompute_granularity == "selective" and (ns.recompute_method or ns.recompute_num_layers is not None):
        fail(case, "selective recompute with a method or layer count")
    if ns.recompute_granularity == "full" and (not ns.recompute_method or ns.recompute_num_layers is None):
        fail(case, "full recompute without a method and layer count")
    ep, etp = ns.expert_model_parallel_size, ns.expert_tensor_parallel_size or tp
    if (ep > 1 and not ns.num_experts) or (ns.num_experts and ns.num_experts % ep) or world % (etp * ep * pp):
        fail(case, "experts do not fit expert parallel")
    if ns.use_megatron_fsdp and (ns.ckpt_format != "fsdp_dtensor" or not ns.use_distributed_optimizer):
        fail(case, "Megatron-FSDP without fsdp_dtensor checkpoints")
    if ns.sequence_parallel and tp == 1:
        fail(case, "sequence parallel without tensor parallel")
    sharding = st["sharding"] if st["dp"] > 1 else 0
    got = (ns.use_distributed_optimizer, ns.use_megatron_fsdp and ns.data_parallel_sharding_strategy)
    want = [(False, False), (True, False), (True, "optim_grads"), (True, "optim_grads_params")][sharding]
    recompute = [None, "selective", "full"][st["recompute"]]
    facts = {"num_layers": st["blocks"], "hidden_size": st["hidden"], "ffn_hidden_size": st["ffn_hidden"],
             "seq_length": st["sequence_length"], "max_position_embeddings": st["sequence_length"],
             "micro_batch_size": st["microbatch_size"], "recompute_granularity": recompute,
             "num_experts": st["experts"] or None, "expert_model_parallel_size": st["ep"] if st["experts"] else 1}
    for key, value in facts.items():
        if getattr(ns, key) != value:
            fail(case, f"--{key} is {getattr(ns, key)!r}, the settings say {value!r}")
    if got != want or (tp, pp, dp) != (st["tp"], st["pp"], st["dp"]):
        fail(case, f"layout or sharding {got} {(tp, pp, dp)} is not the settings'")


# ---- torchtitan ----

def parse_overrides(case, args):
    """The overrides as tyro would take them: the frozen options, then the AC subcommand token."""
    values, ac, i = {}, None, 0
    while i < len(args):
        a = args[i]
        if not a.startswith("--"):
            m = re.fullmatch(r"activation-checkpoint:(selective|full|memory-budget|none)", a)
            if not m or i != len(args) - 1:
                fail(case, f"{a!r} is not the AC subcommand token at the end")
            ac, i = m and m.group(1), i + 1
            continue
        name = a[2:]
        section, _, field = name.rpartition(".")
        row = TORCHTITAN.get(name)
        negated = TORCHTITAN.get(f"{section}.{field[3:]}") if field.startswith("no_") else None
        if row and row["value"] == "1" and i + 1 < len(args):
            values[name], i = args[i + 1], i + 2
        elif row and row["value"] == "0":
            values[name], i = True, i + 1
        elif negated and negated["value"] == "0":
            values[f"{section}.{field[3:]}"], i = False, i + 1
        else:
            fail(case, f"{a!r} is not a torchtitan option that the table lets take this form")
            i += 1
    typed = {}
    for name, v in values.items():
        typed[name] = int(v) if TORCHTITAN[name]["type"].startswith("int") and isinstance(v, str) else v
    return typed, ac


def check_torchtitan(case, fields, ac, st):
    get = fields.get
    pp, tp = get("parallelism.pipeline_parallel_degree"), get("parallelism.tensor_parallel_degree")
    shard, rep = get("parallelism.data_parallel_shard_degree"), get("parallelism.data_parallel_replicate_degree")
    if pp * tp * shard * rep != st["gpus"] or (pp, tp, shard * rep) != (st["pp"], st["tp"], st["dp"]):
        fail(case, "the degrees do not make the settings' GPUs")
    ep = get("parallelism.expert_parallel_degree", 1)
    if (shard * tp) % ep:
        fail(case, "expert parallel does not divide FSDP x TP")
    tokens, step = get("training.num_tokens_per_microbatch_per_dp_rank"), get("training.num_tokens_per_train_step")
    microbatches = get("parallelism.num_pp_microbatches", 1) if pp > 1 else 1
    if tokens % (tp if get("parallelism.enable_sequence_parallel", True) else 1):
        fail(case, "tokens per microbatch do not split over sequence parallel")
    if step % (tokens * microbatches * shard * rep):
        fail(case, "tokens per step are not a whole number of accumulation steps")
    if tokens != st["microbatch_size"] * st["sequence_length"] or step != st["global_batch"] * st["sequence_length"]:
        fail(case, "token counts are not the settings' batch")
    if pp > 1:
        cls = get("parallelism.pipeline_parallel_schedule")
        want = "ZBVZeroBubble" if st["v_placement"] else (
            "PipelineScheduleSingle" if st["stages_per_rank"] == 1 else "PipelineScheduleMulti")
        if cls != want or get("training.disable_cuda_graphs") is not True or not get(
                "parallelism.pipeline_parallel_schedule_csv"):
            fail(case, f"pipeline settings: class {cls!r}, CUDA graphs not disabled, or no CSV")
    if ac != ["none", "selective", "full"][st["recompute"]]:
        fail(case, f"AC policy {ac!r}")


def stage_modules(stage_layers):
    out, block = [], 0
    for stage in stage_layers:
        names = []
        for c in stage:
            if c == "E":
                names.append("tok_embeddings")
            elif c == "L":
                names += ["norm", "lm_head"]
            else:
                names.append(f"layers.{block}")
                block += 1
        out.append(names)
    return out


def attribute_path(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join(reversed(parts)) if isinstance(node, ast.Name) and node.id == "config" else None


def read_registry(case, raw, base):
    """The registry's assignments {path: value}; the AC as its class name or None."""
    for line in raw.split(b"\n")[:2]:  # PEP 263: where Python looks for an encoding declaration
        if re.match(rb"^[ \t\f]*#.*?coding[:=]", line):
            fail(case, f"an encoding declaration on line 1 or 2: {line!r}")
    tree = ast.parse(raw)
    imports = {(n.module, a.name, a.asname) for n in tree.body if isinstance(n, ast.ImportFrom) for a in n.names}
    if (base[0], base[1], "_base_config") not in imports or ("torchtitan.trainer", "Trainer", None) not in imports:
        fail(case, f"imports {imports}")
    funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    if [f.name for f in funcs] != ["ppsched_best"] or funcs[0].args.args:
        fail(case, "not one zero-argument ppsched_best")
        return {}
    body = funcs[0].body
    if ast.unparse(body[0]) != "config = _base_config()" or ast.unparse(body[-1]) != "return config":
        fail(case, "the function does not start from the base config and return it")
    values = {}
    for stmt in body[1:-1]:
        path = attribute_path(stmt.targets[0]) if isinstance(stmt, ast.Assign) else None
        if path is None:
            fail(case, f"a statement other than config.<field> = value: {ast.unparse(stmt)}")
        elif path == "activation_checkpoint":
            v = stmt.value
            ok_call = isinstance(v, ast.Call) and ast.unparse(v.func) in ("FullAC.Config", "SelectiveAC.Config")
            cls = ast.unparse(v.func).split(".")[0] if ok_call else None
            if not ok_call and not (isinstance(v, ast.Constant) and v.value is None):
                fail(case, f"activation_checkpoint = {ast.unparse(v)}")
            if cls and ("torchtitan.distributed.activation_checkpoint", cls, None) not in imports:
                fail(case, f"{cls} is not imported from torchtitan.distributed.activation_checkpoint")
            values[path] = cls
        else:
            values[path] = ast.literal_eval(stmt.value)
            if path not in TORCHTITAN:
                fail(case, f"config.{path} is not a field of the table")
    return values


STUB_CONFIG = '''
def _section(name, fields):
    return type(name, (), {"__slots__": tuple(fields)})()

class _Config:
    __slots__ = ("parallelism", "training", "activation_checkpoint")

def _base():
    c = _Config()
    c.parallelism = _section("ParallelismConfig", %r)
    c.training = _section("TrainingConfig", %r)
    c.activation_checkpoint = "the base's"
    return c
'''

STUB_PROBE = '''
import json, os, sys
import ppsched_torchtitan_config as m
c = m.ppsched_best()
out = {}
for section in ("parallelism", "training"):
    for field in type(getattr(c, section)).__slots__:
        if hasattr(getattr(c, section), field):
            v = getattr(getattr(c, section), field)
            out[section + "." + field] = os.fsencode(v).hex() if isinstance(v, str) else v
ac = c.activation_checkpoint
out["activation_checkpoint"] = None if ac is None else type(ac).__qualname__
json.dump(out, sys.stdout)
'''


def run_registry(case, outdir, base, stubs):
    """Imports the registry against stub torchtitan modules and calls ppsched_best()."""
    sections = {s: [o.split(".", 1)[1] for o in TORCHTITAN if o.startswith(s + ".")] for s in ("parallelism", "training")}
    files = {"torchtitan/trainer.py": "class Trainer:\n    class Config:\n        pass\n",
             "torchtitan/distributed/activation_checkpoint.py":
                 "".join(f"class {c}:\n    class Config:\n        pass\n" for c in ("FullAC", "SelectiveAC")),
             base[0].replace(".", "/") + ".py": STUB_CONFIG % (sections["parallelism"], sections["training"]) +
             f"\ndef {base[1]}():\n    return _base()\n"}
    for path, text in files.items():
        os.makedirs(os.path.join(stubs, os.path.dirname(path)), exist_ok=True)
        with open(os.path.join(stubs, path), "w") as f:
            f.write(text)
    env = dict(os.environ, PYTHONPATH=f"{stubs}:{outdir}")
    p = subprocess.run([sys.executable, "-c", STUB_PROBE], env=env, capture_output=True, text=True)
    if p.returncode != 0:
        fail(case, f"the registry does not run against the stubs: {p.stderr[-800:]}")
        return {}
    return json.loads(p.stdout)


def check_registry(case, outdir, st, overrides, ac, base, stubs):
    with open(os.path.join(outdir, "ppsched_torchtitan_config.py"), "rb") as f:
        raw = f.read()
    raw.decode("utf-8")  # a .py file is UTF-8 unless it declares otherwise
    values = read_registry(case, raw, base)
    want = dict(overrides)
    if st["stage_layers"]:
        want["parallelism.module_fqns_per_model_part"] = stage_modules(st["stage_layers"])
        want["parallelism.pipeline_parallel_layers_per_stage"] = None
    want["activation_checkpoint"] = AC_CLASSES.get(ac)
    differ = sorted(k for k in values.keys() | want.keys() if values.get(k) != want.get(k))
    if differ:
        fail(case, f"the registry and the overrides differ on {differ}")
    ran = run_registry(case, outdir, base, stubs)
    for name, v in want.items():
        got = ran.get(name)
        expect = os.fsencode(v).hex() if isinstance(v, str) and name != "activation_checkpoint" else v
        if name == "activation_checkpoint" and v:
            expect = v + ".Config"
        if got != expect:
            fail(case, f"after running, {name} is {got!r}, not {expect!r}")


# ---- sh ----

def split_script(case, path):
    """(comment lines, the command as shlex splits it): every line before the command a comment."""
    with open(path, "rb") as f:
        lines = f.read().decode("utf-8", "surrogateescape").split("\n")
    first = next(i for i, line in enumerate(lines) if not line.startswith("#"))
    command = "\n".join(lines[first:])
    if not command.endswith("\n") or not command.strip():
        fail(case, f"{os.path.basename(path)} does not end in one command and a newline")
    return lines[:first], shlex.split(command)


def write_stub(path, record):
    with open(path, "w") as f:
        f.write(f"#!{sys.executable}\nimport json, os, sys\n"
                f"json.dump({{'argv': [os.fsencode(a).hex() for a in sys.argv[1:]],"
                f" 'env': {{k: os.environ.get(k) for k in ('NGPU', 'MODULE', 'CONFIG', 'PYTHONPATH')}}}},"
                f" open({record!r}, 'w'))\n")
    os.chmod(path, 0o755)


def run_script(case, script, cwd, env, args=()):
    record = os.path.join(cwd, "record.json")
    p = subprocess.run(["sh", script, *args], cwd=cwd, env=env, capture_output=True)
    if p.returncode != 0 or not os.path.exists(record):
        fail(case, f"sh {os.path.basename(script)} failed: {p.stderr[-400:]!r}")
        return None
    with open(record) as f:
        got = json.load(f)
    os.remove(record)
    got["argv"] = [os.fsdecode(bytes.fromhex(a)) for a in got["argv"]]
    return got


def check_scripts(case, outdir, st, targs, margs, work):
    checkout = os.path.join(work, "checkout")
    os.makedirs(checkout, exist_ok=True)
    write_stub(os.path.join(checkout, "run_train.sh"), os.path.join(checkout, "record.json"))
    bin_dir = os.path.join(work, "bin")
    os.makedirs(bin_dir, exist_ok=True)
    write_stub(os.path.join(bin_dir, "torchrun"), os.path.join(checkout, "record.json"))
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "PYTHONPATH": "/earlier"}
    if targs is not None:
        _, words = split_script(case, os.path.join(outdir, "run_torchtitan.sh"))
        want = [f"PYTHONPATH={outdir}${{PYTHONPATH:+:$PYTHONPATH}}", f"NGPU={st['gpus']}",
                "MODULE=ppsched_torchtitan_config", "CONFIG=ppsched_best", "./run_train.sh", *targs]
        if words != want:
            fail(case, "shlex.split(run_torchtitan.sh) is not the overrides")
        got = run_script(case, os.path.join(outdir, "run_torchtitan.sh"), checkout, env)
        if got and (got["argv"] != targs or got["env"] != {"NGPU": str(st["gpus"]), "MODULE": "ppsched_torchtitan_config",
                                                          "CONFIG": "ppsched_best", "PYTHONPATH": f"{outdir}:/earlier"}):
            fail(case, f"run_train.sh got {got}")
    if margs is not None:
        _, words = split_script(case, os.path.join(outdir, "run_megatron.sh"))
        if words != ["torchrun", "$TORCHRUN_ARGS", "pretrain_gpt.py", *margs, "$@"]:
            fail(case, "shlex.split(run_megatron.sh) is not the arguments")
        env["TORCHRUN_ARGS"] = "--nnodes 2 --nproc_per_node 4"
        got = run_script(case, os.path.join(outdir, "run_megatron.sh"), checkout, env, ["--data-path", "/d"])
        if got and got["argv"] != ["--nnodes", "2", "--nproc_per_node", "4", "pretrain_gpt.py", *margs,
                                   "--data-path", "/d"]:
            fail(case, f"torchrun got {got['argv']}")
    for d in (checkout, outdir, work):
        if os.path.exists(os.path.join(d, "pwned")):
            fail(case, "a command in a value ran")


# ---- the cases ----

def check_case(case, sample, options, expect_refused=()):
    try:
        run_case(case, sample, options, expect_refused)
    except Exception as e:  # a file a reader cannot take at all (SyntaxError, TOMLDecodeError, ...)
        fail(case, f"{type(e).__name__}: {e}")


def run_case(case, sample, options, expect_refused):
    with tempfile.TemporaryDirectory() as work:
        outdir = os.path.join(work, "out dir $(touch pwned)")
        p = subprocess.run([TOOL, outdir, sample, *options], capture_output=True)
        if p.returncode != 0:
            return fail(case, f"ppsched_emit_settings exited {p.returncode}: {p.stderr!r}")
        with open(os.path.join(outdir, "settings.json")) as f:
            st = json.load(f)
        refused = {n[:-len(".refused")] for n in os.listdir(outdir) if n.endswith(".refused")}
        if refused != set(expect_refused):
            fail(case, f"refused {sorted(refused)}, expected {sorted(expect_refused)}")
        csv = dict(zip(options[::2], options[1::2])).get(b"--csv", b"/runs/best/schedule.csv")
        targs = margs = None
        if "torchtitan" not in refused:
            targs = read_args(os.path.join(outdir, "torchtitan_overrides.args"))
            fields, ac = parse_overrides(case, targs)
            check_torchtitan(case, fields, ac, st)
            path = fields.get("parallelism.pipeline_parallel_schedule_csv")
            if path is not None and os.fsencode(path) != (b"./" + csv if csv.startswith(b"-") else csv):
                fail(case, f"the CSV path came back as {os.fsencode(path)!r}")
            base = {"llama3-70b": ("torchtitan.models.llama3.config_registry", "llama3_70b"),
                    "deepseek-v3": ("torchtitan.models.deepseek_v3.config_registry", "deepseek_v3_671b")}[sample]
            check_registry(case, outdir, st, fields, ac, base, os.path.join(work, "stubs"))
        if "megatron" not in refused:
            margs = read_args(os.path.join(outdir, "megatron_args.args"))
            check_megatron(case, margs, st)
        check_scripts(case, outdir, st, targs, margs, work)
        if "torchtitan_toml" not in refused:
            with open(os.path.join(outdir, "torchtitan.toml"), "rb") as f:
                toml = tomllib.loads(f.read().decode("utf-8"))
            fqns = [[("output" if m == "lm_head" else m) for m in s] for s in stage_modules(st["stage_layers"])]
            if (toml["parallelism"]["pipeline_parallel_schedule_csv"].encode() != csv or
                    toml["parallelism"]["module_fqns_per_model_part"] != fqns):
                fail(case, "torchtitan.toml does not hold the settings")


HOSTILE_NAME = b"m\nimport os; os.system('touch pwned')  # \xe2\x80\xae"
HOSTILE_COMMENTS = [b"--comment", b"-*- coding: utf-16 -*-", b"--comment", b"x\r\ny'; touch pwned; '\\"]
check_case("llama3-70b", "llama3-70b", [])
check_case("deepseek-v3", "deepseek-v3", [])
check_case("llama3-70b, hostile non-UTF-8 path, name and comments", "llama3-70b",
           [b"--csv", b"/r/\"q\" 'a'\\b\n$(touch pwned)`touch pwned`/\xc3\xa9\xff.csv", b"--name", HOSTILE_NAME,
            *HOSTILE_COMMENTS], ["torchtitan_toml"])
check_case("deepseek-v3, hostile UTF-8 path", "deepseek-v3",
           [b"--csv", b"/runs/\xc3\xa9t\xc3\xa9 \"q\" 's'\\x\n$(touch pwned)\xe2\x80\xae.csv", b"--name", HOSTILE_NAME])
check_case("llama3-70b, a path that reads as an option", "llama3-70b", [b"--csv", b"-rf.csv"])
check_case("llama3-70b, 4 ranks of one stage, Megatron's own split", "llama3-70b", [b"--even-split", b"4"])
check_case("llama3-70b, sequence parallel off, no recompute", "llama3-70b",
           [b"--sequence-parallel", b"off", b"--recompute", b"none"])
check_case("llama3-70b, ZeRO-1: torchtitan refuses, Megatron's distributed optimizer", "llama3-70b",
           [b"--sharding", b"optimizer"], ["torchtitan"])
check_case("llama3-70b, ZeRO-2: torchtitan refuses, Megatron-FSDP optim_grads", "llama3-70b",
           [b"--sharding", b"gradients"], ["torchtitan"])
check_case("deepseek-v3, no sharding: EP 32 finds no FSDP ranks in torchtitan", "deepseek-v3",
           [b"--sharding", b"none"], ["torchtitan"])

for f in failures:
    print("FAIL", f)
print(f"{len(failures)} failure(s)" if failures else "all framework faces parse as the frameworks read them")
sys.exit(1 if failures else 0)
