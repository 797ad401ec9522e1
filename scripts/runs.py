#!/usr/bin/env python3
"""The run archive: raw GPU run output kept in main's history, not its tree.

docs/runs.md maps each run id to the commit and path that hold it; this script
reads that index.

  python3 scripts/runs.py list [TEXT]        the index rows whose id, GPU or text match
  python3 scripts/runs.py show RUN           one row, its files, and its README if it has one
  python3 scripts/runs.py get RUN [DEST]     the run's files into DEST (default run-archive/RUN)
  python3 scripts/runs.py check              every row resolves (git cat-file), ids are unique
  python3 scripts/runs.py add DIR [--id ID] [--what TEXT]
                                             archive a run folder: one commit adds it under
                                             archive/ID/, the next removes it and adds its row

A citation `run87` names a whole run; `run87:logs.tgz` a file inside it.
"""
import os
import re
import shutil
import subprocess
import sys
import tarfile
import io
from datetime import date

ROOT = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True,
                      cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip()
INDEX = os.path.join(ROOT, "docs", "runs.md")
COLUMNS = ["run", "date", "GPU", "commit", "path", "command", "what it showed"]


def die(msg, code=2):
    print(f"runs.py: {msg}", file=sys.stderr)
    sys.exit(code)


def git(*args, binary=False, check=True):
    r = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=not binary)
    if check and r.returncode != 0:
        err = r.stderr if not binary else r.stderr.decode(errors="replace")
        die(f"git {' '.join(args)}: {err.strip()}")
    return r


def split_row(line):
    # Cells may hold `\|` for a literal bar.
    cells = re.split(r"(?<!\\)\|", line.strip())[1:-1]
    return [c.strip().replace("\\|", "|") for c in cells]


def read_index():
    if not os.path.isfile(INDEX):
        die(f"no index at {INDEX}")
    rows, in_table = [], False
    for no, line in enumerate(open(INDEX, encoding="utf-8"), 1):
        if line.startswith("| run | date |"):
            in_table = True
            continue
        if in_table and line.startswith("| ---"):
            continue
        if in_table and line.startswith("|"):
            cells = split_row(line)
            if len(cells) != len(COLUMNS):
                die(f"{INDEX}:{no}: {len(cells)} cells, the index has {len(COLUMNS)} columns")
            rows.append(dict(zip(COLUMNS, cells), line=no))
        elif in_table and line.strip() == "":
            in_table = False
    return rows


def find(rows, run_id):
    rid = run_id.split(":", 1)[0]
    hit = [r for r in rows if r["run"] == rid]
    if not hit:
        import difflib
        ids = [r["run"] for r in rows]
        near = [i for i in ids if rid.lower() in i.lower()][:8] or difflib.get_close_matches(rid, ids, n=4)
        die(f"no run {rid!r} in docs/runs.md" + (f" (did you mean {', '.join(near)}?)" if near else
                                                  " (`python3 scripts/runs.py list` shows them)"))
    return hit[0]


def tree_files(row):
    r = git("ls-tree", "-r", "--name-only", row["commit"], "--", row["path"], check=False)
    if r.returncode != 0:
        die(f"commit {row['commit']} of {row['run']} is not in this clone ({r.stderr.strip()}); "
            "a shallow clone lacks it: `git fetch --unshallow`")
    return r.stdout.split()


def cmd_list(rows, text=None):
    for r in rows:
        if text is None or text.lower() in " ".join(r[c] for c in COLUMNS).lower():
            what = r["what it showed"]
            print(f"{r['run']:<44} {r['date']}  {r['GPU']:<18} {what[:100]}")


def cmd_show(rows, run_id):
    row = find(rows, run_id)
    for c in COLUMNS:
        print(f"{c:>15}: {row[c]}")
    files = tree_files(row)
    print(f"{'files':>15}: {len(files)}")
    for f in files[:40]:
        print(f"{'':>17}{f[len(row['path'].rstrip('/')) + 1:] or f}")
    if len(files) > 40:
        print(f"{'':>17}… {len(files) - 40} more")
    readme = [f for f in files if os.path.basename(f).startswith("README")]
    if readme:
        print()
        print(git("show", f"{row['commit']}:{readme[0]}").stdout)


def cmd_get(rows, run_id, dest=None):
    row = find(rows, run_id)
    sub = run_id.split(":", 1)[1] if ":" in run_id else ""
    path = row["path"].rstrip("/")
    if sub:
        path = f"{path}/{sub}"
    dest = dest or os.path.join("run-archive", row["run"])
    files = tree_files(dict(row, path=path))
    if not files:
        die(f"{run_id}: nothing at {row['commit']}:{path}")
    archive = git("archive", "--format=tar", row["commit"], "--", path, binary=True).stdout
    # A folder's files land in DEST by their path inside the run; a one-file run's file by its name.
    strip = row["path"].rstrip("/") if row["path"].endswith("/") else os.path.dirname(row["path"])
    os.makedirs(dest, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        for m in tar.getmembers():
            if not m.isfile():
                continue
            rel = os.path.relpath(m.name, strip) if strip else m.name
            out = os.path.join(dest, rel)
            os.makedirs(os.path.dirname(out), exist_ok=True)
            with open(out, "wb") as f:
                f.write(tar.extractfile(m).read())
    print(f"{len(files)} file(s) of {row['run']} ({row['commit']}:{path}) in {dest}/")


def cmd_check(rows):
    bad, seen = 0, set()
    shallow = git("rev-parse", "--is-shallow-repository").stdout.strip() == "true"
    for r in rows:
        if r["run"] in seen:
            print(f"docs/runs.md:{r['line']}: run id {r['run']} twice")
            bad += 1
        seen.add(r["run"])
        if not re.fullmatch(r"\d{4}-\d\d-\d\d", r["date"]):
            print(f"docs/runs.md:{r['line']}: date {r['date']!r} is not YYYY-MM-DD")
            bad += 1
        if shallow:
            continue
        target = f"{r['commit']}:{r['path'].rstrip('/')}"
        if git("cat-file", "-e", target, check=False).returncode != 0:
            print(f"docs/runs.md:{r['line']}: {r['run']}: {target} does not resolve")
            bad += 1
    note = " (shallow clone: commits not checked)" if shallow else ""
    print(f"{len(rows)} runs, {bad} problem(s){note}")
    return 1 if bad else 0


def next_run_id(rows):
    nums = [int(m.group(1)) for r in rows if (m := re.fullmatch(r"run(\d+)", r["run"]))]
    return f"run{max(nums, default=0) + 1}"


def manifest_field(d, key):
    import json
    p = os.path.join(d, "manifest.json")
    if os.path.isfile(p):
        try:
            return json.load(open(p)).get(key)
        except (OSError, ValueError):
            return None
    return None


def cmd_add(rows, folder, run_id=None, what=None):
    if not os.path.isdir(folder):
        die(f"{folder} is not a folder")
    if git("status", "--porcelain", "--untracked-files=no").stdout.strip():
        die("the tree has uncommitted changes: commit or stash them first, `add` makes two commits of its own")
    run_id = run_id or manifest_field(folder, "run_id") or next_run_id(rows)
    if any(r["run"] == run_id for r in rows):
        die(f"run id {run_id} is already in docs/runs.md")
    rel = f"archive/{run_id}"
    shutil.copytree(folder, os.path.join(ROOT, rel))
    git("add", "-f", rel)
    git("commit", "-q", "-m", f"Run archive: {run_id} (raw output; the next commit takes it out of the tree)")
    commit = git("rev-parse", "--short=12", "HEAD").stdout.strip()
    git("rm", "-r", "-q", rel)
    shutil.rmtree(os.path.join(ROOT, rel), ignore_errors=True)
    gpu = manifest_field(folder, "gpu") or "?"
    cmd = manifest_field(folder, "command") or ""
    what = what or manifest_field(folder, "summary") or manifest_field(folder, "campaign") or ""
    day = (manifest_field(folder, "started") or date.today().isoformat())[:10]
    cells = [run_id, day, gpu, commit, rel + "/", f"`{cmd}`" if cmd else "", what]
    row = "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |\n"
    lines = open(INDEX, encoding="utf-8").readlines()
    last = max(r["line"] for r in rows)
    lines.insert(last, row)
    open(INDEX, "w", encoding="utf-8").writelines(lines)
    git("add", INDEX)
    git("commit", "-q", "-m", f"Run archive: index {run_id} -> {commit}:{rel}/")
    print(f"{run_id}: {commit}:{rel}/ (cite it as `{run_id}`; `python3 scripts/runs.py get {run_id}` fetches it)")


def main(argv):
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(__doc__.strip())
        return 0
    cmd, rest = argv[0], argv[1:]
    rows = read_index()
    if cmd == "list" and len(rest) <= 1:
        cmd_list(rows, *rest)
    elif cmd == "show" and len(rest) == 1:
        cmd_show(rows, rest[0])
    elif cmd == "get" and 1 <= len(rest) <= 2:
        cmd_get(rows, *rest)
    elif cmd == "check" and not rest:
        return cmd_check(rows)
    elif cmd == "add" and rest:
        opts = {"--id": None, "--what": None}
        folder = None
        it = iter(rest)
        for a in it:
            if a in opts:
                opts[a] = next(it, None) or die(f"{a} needs a value")
            elif folder is None:
                folder = a
            else:
                die(f"unexpected argument {a!r}")
        cmd_add(rows, folder, opts["--id"], opts["--what"])
    else:
        die(f"unknown command or wrong arguments: {' '.join(argv)} (`python3 scripts/runs.py --help`)")
    return 0


if __name__ == "__main__":
    import signal
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends quietly
    sys.exit(main(sys.argv[1:]))
