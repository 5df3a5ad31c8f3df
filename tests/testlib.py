"""What the Python test drivers share: running the xapian-gpu command,
building a database with its GPU index, and the GPU skip rule."""
import os
import shutil
import subprocess
import sys


def run(cmd, env=None, **kw):
    """Run cmd; on a nonzero exit, fail the test with its output.  Returns
    stdout."""
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, **kw)
    if p.returncode != 0:
        sys.exit("FAIL: %s exited %d:\n%s%s" % (" ".join(cmd), p.returncode,
                                                 p.stdout, p.stderr))
    return p.stdout


def run_any(cmd, env=None):
    """Run cmd whatever its exit status (for expected failures)."""
    return subprocess.run(cmd, capture_output=True, text=True, env=env)


def build(binary, tsv, db, *opts, export=()):
    """Index tsv into a fresh database db (index options opts), export
    (export options `export`)."""
    shutil.rmtree(db, ignore_errors=True)
    run([binary, "index", "--quiet", *opts, tsv, db])
    run([binary, "export", "--quiet", *export, db])


def gpu_unavailable(binary, ir_data, work):
    """Why the GPU engine cannot run here, or None.  The CPU twins
    (XG_GPU_TWINS=1) always can."""
    if os.environ.get("XG_GPU_TWINS") == "1":
        return None
    probe = os.path.join(work, "probe")
    build(binary, os.path.join(ir_data, "adi", "docs.tsv"), probe)
    p = run_any([binary, "search", "--db", probe, "--engine", "gpu", "probe"])
    return p.stderr.strip() or "no GPU" if p.returncode != 0 else None


def skip_reason(binary, ir_data, work, engine):
    """Why a driver over the ir-data collections must skip (exit 77), or
    None; creates work."""
    if not os.path.isdir(ir_data):
        return "%s not found" % ir_data
    os.makedirs(work, exist_ok=True)
    why = engine == "gpu" and gpu_unavailable(binary, ir_data, work)
    return "GPU engine unavailable: %s" % why if why else None


def collections(ir_data, only=None):
    """The ir-data collections with a docs.tsv, sorted; `only` a
    comma-separated subset."""
    colls = sorted(d for d in os.listdir(ir_data)
                   if os.path.isfile(os.path.join(ir_data, d, "docs.tsv")))
    return [c for c in colls if c in only.split(",")] if only else colls
