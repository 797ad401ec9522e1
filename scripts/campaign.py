#!/usr/bin/env python3
"""Runs a declared GPU campaign (bench/campaigns/*.toml) and writes one run folder.

  python3 scripts/campaign.py run CAMPAIGN.toml... [--bin PATH] [--out DIR] [--id RUN] [--only STEP,...]
  python3 scripts/campaign.py plan CAMPAIGN.toml...   the commands a run would make, nothing run
  python3 scripts/campaign.py check CAMPAIGN.toml...  parse and validate (CI runs this; no GPU needed)

A run folder ($OUT/RUN/) holds at most six files, so that it comes back from the
device machine whole: manifest.json (campaign, commit, binary hash, GPU, driver,
clocks, every command with its exit code and time), table.md (what the runner
printed), results.json (every measured number), logs.tgz, sessions.tgz and
campaign.toml. `python3 scripts/runs.py add $OUT/RUN` then files it in the run
archive. The binary is `--bin` (default .carry/attnscope); the commit it was
built from is read from .carry/BUILD (`commit DIRTY?`, written beside the binary).
"""
import argparse
import csv
import hashlib
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import tomllib
from datetime import datetime, timezone

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# B,H,S,D with K/V heads and keys after a slash (8,32/8,1/32768,128).
SHAPE = re.compile(r"^\d+,\d+(/\d+)?,\d+(/\d+)?,\d+$")
REGIMES = ("back-to-back", "isolated", "interleaved")
STEP_KINDS = {
    # kind: (required keys, optional keys)
    "doctor": (set(), {"name", "timeout_s"}),
    "selftest": (set(), {"name", "args", "timeout_s", "show"}),
    "bench": (set(), {"name", "regimes", "baseline", "warm_seconds", "max_seconds", "args", "timeout_s", "cases"}),
    "ncu": (set(), {"name", "metrics", "baseline", "count", "skip", "cache_control", "timeout_s", "cases"}),
    "sanitize": ({"targets"}, {"name", "tools", "timeout_s", "parallel"}),
    "gates": ({"variants"}, {"name", "shape", "args", "timeout_s"}),
    "shell": ({"name", "script"}, {"timeout_s", "gpus"}),
}
CAMPAIGN_KEYS = {"campaign", "about", "gpus", "case", "step", "replaces"}
CASE_KEYS = {"name", "shape", "flags", "variants", "target"}


class CampaignError(Exception):
    pass


def load(path):
    try:
        with open(path, "rb") as f:
            c = tomllib.load(f)
    except OSError as e:
        raise CampaignError(f"{path}: {e.strerror}")
    except tomllib.TOMLDecodeError as e:
        raise CampaignError(f"{path}: not TOML: {e}")
    where = os.path.basename(path)
    unknown = set(c) - CAMPAIGN_KEYS
    if unknown:
        raise CampaignError(f"{where}: unknown key(s) {sorted(unknown)} (known: {sorted(CAMPAIGN_KEYS)})")
    for key in ("campaign", "about"):
        if not isinstance(c.get(key), str) or not c[key].strip():
            raise CampaignError(f"{where}: `{key}` (a non-empty string) is required")
    cases = c.setdefault("case", [])
    names = set()
    for i, case in enumerate(cases):
        at = f"{where}: case {i + 1}"
        bad = set(case) - CASE_KEYS
        if bad:
            raise CampaignError(f"{at}: unknown key(s) {sorted(bad)} (known: {sorted(CASE_KEYS)})")
        if not SHAPE.match(str(case.get("shape", ""))):
            raise CampaignError(f"{at}: shape {case.get('shape')!r} is not B,H,S,D (e.g. \"2,8,512,64\")")
        vs = case.get("variants")
        if not isinstance(vs, list) or not vs or not all(isinstance(v, str) and v for v in vs):
            raise CampaignError(f"{at}: `variants` must be a non-empty list of variant names")
        case.setdefault("flags", [])
        case.setdefault("name", f"{case['shape'].replace(',', 'x').replace('/', 'o')}{''.join(f.strip('-') for f in case['flags'])}")
        if case["name"] in names:
            raise CampaignError(f"{at}: case name {case['name']!r} twice")
        names.add(case["name"])
    steps = c.get("step")
    if not isinstance(steps, list) or not steps:
        raise CampaignError(f"{where}: at least one [[step]] is required")
    step_names = set()
    for i, step in enumerate(steps):
        at = f"{where}: step {i + 1}"
        kind = step.get("kind")
        if kind not in STEP_KINDS:
            raise CampaignError(f"{at}: kind {kind!r} is not one of {sorted(STEP_KINDS)}")
        need, may = STEP_KINDS[kind]
        keys = set(step) - {"kind"}
        if need - keys:
            raise CampaignError(f"{at} ({kind}): missing {sorted(need - keys)}")
        if keys - need - may:
            raise CampaignError(f"{at} ({kind}): unknown key(s) {sorted(keys - need - may)} "
                                f"(known: {sorted(need | may)})")
        step.setdefault("name", kind)
        if step["name"] in step_names:
            raise CampaignError(f"{at}: step name {step['name']!r} twice (name one with `name = …`)")
        step_names.add(step["name"])
        if kind in ("bench", "ncu"):
            if not cases:
                raise CampaignError(f"{at} ({kind}): the campaign declares no [[case]]")
            for n in step.get("cases", []):
                if n not in names:
                    raise CampaignError(f"{at}: case {n!r} is not declared (cases: {sorted(names)})")
            base = step.get("baseline")
            if base is not None:
                for case in step_cases(c, step):
                    if base not in case["variants"]:
                        raise CampaignError(f"{at}: baseline {base!r} is not among case {case['name']}'s variants")
        for r in step.get("regimes", []):
            if r not in REGIMES:
                raise CampaignError(f"{at}: regime {r!r} is not one of {REGIMES}")
        if kind == "sanitize":
            for t in step["targets"]:
                if not SHAPE.match(str(t.get("shape", ""))) or not t.get("variant"):
                    raise CampaignError(f"{at}: each target needs `variant` and a B,H,S,D `shape`: {t}")
    c["path"] = path
    return c


def step_cases(c, step):
    wanted = step.get("cases")
    return [k for k in c["case"] if wanted is None or k["name"] in wanted]


def slug(text):
    return re.sub(r"[^A-Za-z0-9.-]+", "_", text).strip("_")


class Run:
    """One run folder: every command goes through `cmd`, which logs and times it."""

    def __init__(self, args, campaigns):
        self.bin = args.bin
        self.budget = args.budget_s
        self.dry = args.dry
        self.campaigns = campaigns
        self.id = args.id or f"{'+'.join(c['campaign'] for c in campaigns)}-{datetime.now(timezone.utc):%Y%m%dT%H%M%SZ}"
        self.folder = os.path.join(args.out, self.id)
        self.work = tempfile.mkdtemp(prefix="campaign-")
        self.logs = os.path.join(self.work, "logs")
        self.sessions = os.path.join(self.work, "sessions")
        os.makedirs(self.logs)
        os.makedirs(self.sessions)
        self.commands = []
        self.results = []
        self.lines = []
        self.t0 = time.time()

    def say(self, line="", stamp=True):
        if not self.dry and stamp:
            line = f"[{time.time() - self.t0:5.0f}s] {line}" if line else line
        print(line, flush=True)
        self.lines.append(line)

    def cmd(self, argv, log, timeout=600, env=None, stdout_file=None):
        """Runs argv; its stdout and stderr go to logs/LOG (stdout to stdout_file if given)."""
        shown = " ".join(shlex.quote(a) for a in argv)
        if self.dry:
            print(f"  $ {shown}")
            return 0, ""
        if self.budget is not None and time.time() - self.t0 > self.budget:
            # Past the budget nothing new starts, so that the folder is packed before the call's limit.
            self.commands.append({"argv": argv, "log": None, "rc": None, "seconds": 0, "skipped": "over --budget-s"})
            return None, "skipped: over the campaign's --budget-s"
        if self.budget is not None:
            # A command that would run past the budget is cut at it, so that the folder is packed in time.
            timeout = max(5, min(timeout, self.budget - (time.time() - self.t0)))
        t = time.time()
        path = os.path.join(self.logs, log)
        with open(path, "w") as out:
            sink = open(stdout_file, "w") if stdout_file else out
            try:
                rc = subprocess.run(argv, stdout=sink, stderr=out, timeout=timeout, cwd=ROOT,
                                    env={**os.environ, **(env or {})}).returncode
            except subprocess.TimeoutExpired:
                rc = 124
                out.write(f"\n[campaign] killed after {timeout} s\n")
            except OSError as e:
                rc = 127
                out.write(f"\n[campaign] could not start: {e}\n")
            finally:
                if stdout_file:
                    sink.close()
        self.commands.append({"argv": argv, "log": f"logs/{log}", "rc": rc, "seconds": round(time.time() - t, 1)})
        return rc, open(path, errors="replace").read()


def bench_step(run, c, step):
    regimes = step.get("regimes", ["back-to-back"])
    for case in step_cases(c, step):
        for regime in regimes:
            tag = f"{case['name']}-{regime}"
            run.say(f"bench {case['shape']} {' '.join(case['flags'])} {regime}: {', '.join(case['variants'])}")
            js = os.path.join(run.logs, f"bench-{tag}.json")
            argv = [run.bin, "bench", "--shape", case["shape"], *case["flags"], "--regime", regime,
                    "--variants", ",".join(case["variants"]), "--warm-seconds", str(step.get("warm_seconds", 0.5)),
                    "--max-seconds", str(step.get("max_seconds", 1)), "--telemetry-hz", "0", "--json",
                    "--record", os.path.join(run.sessions, f"{tag}.jsonl.zst"), *step.get("args", [])]
            rc, err = run.cmd(argv, f"bench-{tag}.err", step.get("timeout_s", 180), stdout_file=js)
            if run.dry:
                continue
            try:
                rows = json.load(open(js))["results"]
            except (OSError, ValueError, KeyError) as e:
                run.say(f"  rc={rc}, no JSON ({e}): {err.strip().splitlines()[-1:] or ''}")
                continue
            base = next((r.get("median_us") for r in rows if r.get("variant") == step.get("baseline")), None)
            for r in rows:
                m = r.get("median_us")
                ratio = m / base if (m and base) else None
                run.results.append({"step": step["name"], "case": case["name"], "shape": case["shape"],
                                    "flags": case["flags"], "variant": r.get("variant"), "referee": "cupti",
                                    "regime": regime, "median_us": m, "ci_us": r.get("median_ci_us"),
                                    "ratio": ratio, "correct": r.get("correct"), "tflops": r.get("tflops"),
                                    "error": r.get("error"), "target": case.get("target"),
                                    "baseline": step.get("baseline"), "margin": r.get("margin"),
                                    "checked": r.get("checked"), "checks": check_margins(r)})
                ok = "PASS" if r.get("correct") else ("ERROR " + r["error"][:60] if r.get("error") else "FAIL")
                margins = " ".join(f"{c['inputs']} {fmt(c['element'], 0, 2).strip()}/{fmt(c['row'], 0, 2).strip()}"
                                   for c in check_margins(r))
                run.say(f"  {r.get('variant', '?'):<34} {fmt(m, 8, 2)} µs  {fmt(ratio, 6, 3)}×  "
                        f"{fmt(r.get('tflops'), 6, 1)} TF/s  {ok}  margin {fmt(r.get('margin'), 0, 1).strip()}× "
                        f"(worst element/row over their bounds: {margins})")
            checked = next((r.get("checked") for r in rows if r.get("checked")), None)
            if checked:
                run.say(f"  checked: {checked}")


def check_margins(row):
    """Each of a bench row's checks: its distribution, seed, and its worst element's and worst row's ratio
    to their bounds (at most 1 passes; the inverse is the margin)."""
    checks = (row.get("check") or {}).get("checks") or []
    return [{"inputs": c.get("inputs"), "seed": c.get("seed"), "pass": c.get("pass"),
             "element": (c.get("worst_element") or {}).get("ratio"),
             "row": (c.get("worst_row") or {}).get("ratio")} for c in checks]


def ncu_median(path):
    """gpu__time_duration's median in µs over an ncu CSV's kernels (the L2 scrub and clock probe left out)."""
    if not os.path.isfile(path):
        return None, 0
    rows = [r for r in csv.reader(l for l in open(path, errors="replace") if l.startswith('"'))]
    if not rows or "Metric Value" not in rows[0]:
        return None, 0
    h = rows[0]
    i, k = h.index("Metric Value"), h.index("Kernel Name")
    n = h.index("Metric Name") if "Metric Name" in h else None
    vals = [float(r[i].replace(",", "")) for r in rows[1:]
            if "l2_scrub" not in r[k] and "clock_probe" not in r[k]
            and (n is None or r[n] == "gpu__time_duration.sum")]
    return (statistics.median(vals) / 1e3 if vals else None), len(vals)


def ncu_step(run, c, step):
    metrics = step.get("metrics", ["gpu__time_duration.sum"])
    count, skip = step.get("count", 9), step.get("skip", 2)
    for case in step_cases(c, step):
        meds = {}
        for v in case["variants"]:
            tag = f"ncu-{case['name']}-{slug(v)}"
            argv = ["ncu", "--metrics", ",".join(metrics), "--clock-control", "none", "--cache-control",
                    step.get("cache_control", "none"), "--launch-skip", str(skip), "--csv", run.bin, "launch",
                    "--variant", v, "--shape", case["shape"], *case["flags"], "--count", str(count)]
            csv_path = os.path.join(run.logs, f"{tag}.csv")
            rc, _ = run.cmd(argv, f"{tag}.err", step.get("timeout_s", 180), stdout_file=csv_path)
            if not run.dry:
                meds[v] = ncu_median(csv_path) + (rc,)
        if run.dry:
            continue
        base = meds.get(step.get("baseline"), (None,))[0]
        run.say(f"ncu {case['shape']} {' '.join(case['flags'])} (gpu__time_duration, launches {skip + 1}–{count} of {count})")
        for v, (m, n, rc) in meds.items():
            ratio = m / base if (m and base) else None
            run.results.append({"step": step["name"], "case": case["name"], "shape": case["shape"],
                                "flags": case["flags"], "variant": v, "referee": "ncu", "regime": "ncu",
                                "median_us": m, "ratio": ratio, "kernels": n, "rc": rc, "target": case.get("target"),
                                "baseline": step.get("baseline")})
            run.say(f"  {v:<34} {fmt(m, 8, 2)} µs  {fmt(ratio, 6, 3)}×  ({n} kernels, rc {rc})")


def sanitize_step(run, c, step):
    """Every (target, tool) pair at once, up to `parallel` (default 8): a sanitizer is CPU-bound."""
    from concurrent.futures import ThreadPoolExecutor
    tools = step.get("tools", ["memcheck", "racecheck", "synccheck"])
    jobs = [(t, tool) for t in step["targets"] for tool in tools]
    run.say(f"sanitize: {len(step['targets'])} target(s) × {', '.join(tools)}")

    def one(job):
        t, tool = job
        flags = t.get("flags", [])
        tag = f"san-{tool}-{slug(t['variant'])}-{slug(t['shape'])}{slug(''.join(flags))}"
        argv = ["compute-sanitizer", "--tool", tool, "--error-exitcode", "9", run.bin, "bench", "--shape",
                t["shape"], *flags, "--variants", t["variant"], "--launches", "2", "--timer", "events",
                "--telemetry-hz", "0"]
        return job, run.cmd(argv, f"{tag}.log", step.get("timeout_s", 240))

    with ThreadPoolExecutor(max_workers=1 if run.dry else step.get("parallel", 8)) as pool:
        done = list(pool.map(one, jobs))
    if run.dry:
        return
    for (t, tool), (rc, log) in done:
        flags = t.get("flags", [])
        summary = (re.findall(r"(?:ERROR|RACECHECK) SUMMARY.*", log) or ["no summary"])[-1]
        run.results.append({"step": step["name"], "tool": tool, "variant": t["variant"], "shape": t["shape"],
                            "flags": flags, "rc": rc, "summary": summary})
        run.say(f"  {tool:<9} {t['variant']:<30} {t['shape']:<13} {' '.join(flags):<17} rc={rc} {summary}")


def selftest_step(run, c, step):
    args = step.get("args", [])
    run.say(f"selftest {' '.join(args)}")
    rc, log = run.cmd([run.bin, "selftest", *args], f"{step['name']}.log", step.get("timeout_s", 600))
    if run.dry:
        return
    lines = log.strip().splitlines()
    fails = [l for l in lines if l.startswith("FAIL")]
    shown = [l for l in lines if step.get("show") and re.search(step["show"], l)]
    run.results.append({"step": step["name"], "rc": rc, "failures": fails[:50], "last": lines[-1] if lines else ""})
    for l in fails[:20] + shown[:80]:
        run.say(f"  {l[:200]}")
    run.say(f"  rc={rc} {lines[-1][:200] if lines else '(no output)'}")


def doctor_step(run, c, step):
    run.say("doctor")
    rc, log = run.cmd([run.bin, "doctor"], "doctor.log", step.get("timeout_s", 60))
    if not run.dry:
        for l in log.strip().splitlines():
            run.say(f"  {l[:200]}")
        run.results.append({"step": step["name"], "rc": rc})


def gates_step(run, c, step):
    for v in step["variants"]:
        argv = [run.bin, "gates", "--variant", v, "--max-seconds", "1", "--json", *step.get("args", [])]
        if step.get("shape"):
            argv += ["--shape", step["shape"]]
        js = os.path.join(run.logs, f"gates-{slug(v)}.json")
        rc, _ = run.cmd(argv, f"gates-{slug(v)}.err", step.get("timeout_s", 180), stdout_file=js)
        if run.dry:
            continue
        try:
            d = json.load(open(js))
        except (OSError, ValueError) as e:
            run.say(f"  {v:<34} rc={rc} no JSON ({e})")
            continue
        marks = " ".join(f"{g['id']}={'-' if g['status'] == 'not_applicable' else g['status'][0].upper()}"
                         for g in d.get("gates", []))
        run.results.append({"step": step["name"], "variant": v, "rc": rc, "gates": d.get("gates"),
                            "counter_error": d.get("counter_error")})
        run.say(f"  {v:<34} rc={rc} {marks} {d.get('counter_error') or ''}")


PRELUDE = r"""
set -u
say() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
source "$ROOT/scripts/ncu-lib.sh"
"""


def shell_step(run, c, step):
    run.say(f"{step['name']}")
    script = PRELUDE + step["script"]
    env = {"BIN": run.bin, "RUN": run.work, "LOGS": run.logs, "SESSIONS": run.sessions, "ROOT": ROOT,
           "T0": str(int(time.time()))}
    if run.dry:
        print("  $ bash -c '<script>' with BIN RUN LOGS SESSIONS ROOT set:")
        for l in step["script"].strip().splitlines():
            print(f"    {l}")
        return
    # From a file, not `bash -c`: a step that ends its processes with `pkill -f PATTERN` would match
    # its own command line, which then holds the whole script, and kill itself.
    path = os.path.join(run.logs, f"{slug(step['name'])}.sh")
    with open(path, "w") as f:
        f.write(script)
    rc, log = run.cmd(["bash", path], f"{slug(step['name'])}.log", step.get("timeout_s", 300), env=env)
    for l in log.rstrip().splitlines()[-60:]:
        run.say(f"  {l[:220]}")
    run.say(f"  rc={rc}")
    run.results.append({"step": step["name"], "rc": rc})


STEPS = {"doctor": doctor_step, "selftest": selftest_step, "bench": bench_step, "ncu": ncu_step,
         "sanitize": sanitize_step, "gates": gates_step, "shell": shell_step}


def fmt(x, width, digits):
    return f"{x:{width}.{digits}f}" if isinstance(x, (int, float)) else f"{'—':>{width}}"


def summary_table(results):
    """One row per case and variant: the ratios of every referee and regime side by side."""
    timed = [r for r in results if r.get("referee") in ("cupti", "ncu")]
    if not timed:
        return []
    cols = []
    for r in timed:
        if r["regime"] not in cols:
            cols.append(r["regime"])
    rows = {}
    for r in timed:
        rows.setdefault((r["case"], r["variant"]), {})[r["regime"]] = r
    out = ["| case | variant | " + " | ".join(f"{c} µs | ×" for c in cols) + " | target |",
           "| --- | --- | " + " | ".join("---: | ---:" for _ in cols) + " | ---: |"]
    for (case, v), by in rows.items():
        cells = []
        for c in cols:
            r = by.get(c, {})
            cells.append(f"{fmt(r.get('median_us'), 0, 2).strip()} | {fmt(r.get('ratio'), 0, 3).strip()}")
        # A target bounds the ratio to the baseline, so the baseline's own row has none.
        target = next((r.get("target") for r in by.values()
                       if r.get("target") is not None and r["variant"] != r.get("baseline")), None)
        out.append(f"| {case} | {v} | " + " | ".join(cells) + f" | {f'≤ {target:g}' if target else ''} |")
    return out


def machine_facts():
    q = "name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu,clocks_throttle_reasons.active"
    try:
        out = subprocess.run(["nvidia-smi", f"--query-gpu={q}", "--format=csv,noheader"], capture_output=True,
                             text=True, timeout=30).stdout.strip().splitlines()
    except (OSError, subprocess.TimeoutExpired):
        return {"gpus": [], "note": "nvidia-smi not found"}
    keys = q.split(",")
    return {"gpus": [dict(zip(keys, (x.strip() for x in l.split(",")))) for l in out]}


def build_info(binary):
    info = {"binary": binary}
    try:
        info["binary_sha256"] = hashlib.sha256(open(binary, "rb").read()).hexdigest()
    except OSError as e:
        info["binary_sha256"] = None
        info["binary_error"] = e.strerror
    build = os.path.join(os.path.dirname(binary), "BUILD")
    if os.path.isfile(build):
        words = open(build).read().split()
        info["commit"] = words[0] if words else None
        info["dirty"] = "dirty" in words
    else:
        git = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=ROOT)
        info["commit"] = git.stdout.strip() or None
    return info


def pack(run):
    os.makedirs(run.folder, exist_ok=True)
    # Everything a step wrote (logs, a shell step's files in $RUN) but the sessions, in one archive.
    with tarfile.open(os.path.join(run.folder, "logs.tgz"), "w:gz") as t:
        for name in sorted(os.listdir(run.work)):
            if name != "sessions":
                t.add(os.path.join(run.work, name), arcname=name)
    if os.listdir(run.sessions):
        # The sessions are zstd already: a plain tar.
        with tarfile.open(os.path.join(run.folder, "sessions.tar"), "w") as t:
            t.add(run.sessions, arcname="sessions")
    shutil.rmtree(run.work, ignore_errors=True)


def gpu_environment():
    """What every command of a run sees: CUDA's tools on PATH, and PyTorch's cuDNN under the bare name
    cudarc asks the loader for first, so that attnscope's `cudnn` and torch's run the same library."""
    os.environ["PATH"] = "/usr/local/cuda/bin:" + os.environ.get("PATH", "")
    find = subprocess.run([sys.executable, "-c", "import nvidia.cudnn, os; "
                           "print(os.path.join(list(nvidia.cudnn.__path__)[0], 'lib'))"],
                          capture_output=True, text=True)
    lib = find.stdout.strip()
    if find.returncode != 0 or not os.path.isfile(os.path.join(lib, "libcudnn.so.9")):
        return "cuDNN: PyTorch's copy not found; attnscope looks for libcudnn itself"
    link = os.path.join(tempfile.gettempdir(), "cudnn-link")
    os.makedirs(link, exist_ok=True)
    target = os.path.join(link, "libcudnn.so")
    if os.path.lexists(target):
        os.remove(target)
    os.symlink(os.path.join(lib, "libcudnn.so.9"), target)
    old = os.environ.get("LD_LIBRARY_PATH")
    os.environ["LD_LIBRARY_PATH"] = f"{link}:{lib}" + (f":{old}" if old else "")
    return f"cuDNN for attnscope: {lib}/libcudnn.so.9 (PyTorch's)"


def main(argv):
    ap = argparse.ArgumentParser(prog="campaign.py", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("verb", choices=["run", "plan", "check"])
    ap.add_argument("campaigns", nargs="+", metavar="CAMPAIGN.toml")
    ap.add_argument("--bin", default=os.path.join(ROOT, ".carry", "attnscope"))
    ap.add_argument("--out", default=os.environ.get("OUT", os.path.join(ROOT, "run-archive", "new")))
    ap.add_argument("--id", help="the run id (default: CAMPAIGN-UTC time); `runs.py add` keeps it")
    ap.add_argument("--budget-s", type=float, help="start no command after this many seconds and cut one still "
                    "running then; the folder is still packed: keeps a run inside a call's time limit")
    ap.add_argument("--only", help="comma-separated step names to run, the others skipped")
    args = ap.parse_args(argv)
    args.bin, args.out = os.path.abspath(args.bin), os.path.abspath(args.out)  # commands run in the repo root
    try:
        campaigns = [load(p) for p in args.campaigns]
    except CampaignError as e:
        print(f"campaign.py: {e}", file=sys.stderr)
        return 2
    if args.verb == "check":
        for c in campaigns:
            print(f"ok {os.path.relpath(c['path'], ROOT)}: {c['campaign']}, {len(c['case'])} case(s), "
                  f"{len(c['step'])} step(s) ({', '.join(s['name'] for s in c['step'])})")
        return 0
    only = set(args.only.split(",")) if args.only else None
    if only:
        known = {s["name"] for c in campaigns for s in c["step"]}
        if only - known:
            print(f"campaign.py: --only names no step {sorted(only - known)} (steps: {sorted(known)})", file=sys.stderr)
            return 2
    args.dry = args.verb == "plan"
    if not args.dry and not os.access(args.bin, os.X_OK):
        print(f"campaign.py: {args.bin} is not an executable attnscope binary (build it, copy it there, or --bin)",
              file=sys.stderr)
        return 2
    run = Run(args, campaigns)
    started = datetime.now(timezone.utc)
    facts = {} if args.dry else machine_facts()
    if not args.dry:
        run.say(gpu_environment())
        for g in facts.get("gpus", []):
            run.say(" · ".join(g.values()))
    for c in campaigns:
        run.say(f"campaign {c['campaign']}: {c['about'].strip().splitlines()[0]}")
        for step in c["step"]:
            if only and step["name"] not in only:
                continue
            STEPS[step["kind"]](run, c, step)
    if args.dry:
        shutil.rmtree(run.work, ignore_errors=True)
        return 0
    table = summary_table(run.results)
    if table:
        run.say()
        for l in table:
            run.say(l, stamp=False)
        run.say()
    failed = [x for x in run.commands if x["rc"] not in (0, None)]
    skipped = [x for x in run.commands if x["rc"] is None]
    if skipped:
        run.say(f"{len(skipped)} command(s) not started: over --budget-s {run.budget:g}")
    run.say(f"{len(run.commands)} commands, {len(failed)} with a non-zero exit, "
            f"{time.time() - run.t0:.0f} s; run folder {run.folder}")
    pack(run)
    for c in campaigns:
        shutil.copy(c["path"], os.path.join(run.folder, f"{c['campaign']}.toml"))
    manifest = {
        "run_id": run.id, "campaign": "+".join(c["campaign"] for c in campaigns),
        "about": " / ".join(c["about"].strip().splitlines()[0] for c in campaigns),
        "command": "python3 scripts/campaign.py run " + " ".join(os.path.relpath(c["path"], ROOT) for c in campaigns)
                   + (f" --only {args.only}" if args.only else ""),
        "started": started.isoformat(timespec="seconds"), "seconds": round(time.time() - run.t0, 1),
        **build_info(args.bin), **facts,
        "gpu": facts["gpus"][0]["name"] if facts.get("gpus") else None,
        "commands": run.commands,
    }
    json.dump(manifest, open(os.path.join(run.folder, "manifest.json"), "w"), indent=1)
    json.dump(run.results, open(os.path.join(run.folder, "results.json"), "w"), indent=1)
    open(os.path.join(run.folder, "table.md"), "w").write("\n".join(run.lines) + "\n")
    return 1 if failed or skipped else 0


if __name__ == "__main__":
    import signal
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends quietly
    sys.exit(main(sys.argv[1:]))
