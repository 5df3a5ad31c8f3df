"""What the Python test drivers share: running the xapian-gpu command,
building a database with its GPU index, and the GPU skip rule."""
import os
import re
import shutil
import subprocess
import sys

# Each line as it is printed, in order with the FAIL lines on stderr.
sys.stdout.reconfigure(line_buffering=True)


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


def write_and_maybe_skip(tsv):
    """Documents on which stock's top k misses a document its own full
    ranking holds (its AND_MAYBE skip, docs/architecture.md): for the
    query `p r e` (OR, BM25, no stemming) get_mset(0, 1) returns document
    1 (5.8405) while the full ranking starts with document 4 (5.9575).
    Document 1 = e filler*5, 2 = e filler*60, 3 = p filler*40, 4 = p*5
    r*5; 5-1000 filler*5, with p on 5-50 and r on 702-1000 (termfreqs p
    48, r 300, e 2)."""
    with open(tsv, "w") as f:
        for d in range(1, 1001):
            words = {1: "e " + "filler " * 5, 2: "e " + "filler " * 60,
                     3: "p " + "filler " * 40, 4: "p " * 5 + "r " * 5}.get(d)
            if words is None:
                words = "filler " * 5 + ("p " if d <= 50 else "") + \
                        ("r " if d >= 702 else "")
            f.write("%d\t%s\n" % (d, words.strip()))


SAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sample")

# What the GPU probe says when there is no device to test (the only reason
# a GPU test may skip); any other failure of the GPU engine is a FAIL.
NO_DEVICE = ("built without CUDA", "no CUDA device", "not usable")


def resolve_ir_data(ir_data):
    """The collections to test: ir_data, or the bundled sample
    (tests/sample: cranfield, 1,400 documents, 225 queries) where ir_data
    does not exist (a plain clone without ../shared).  An ir_data that
    exists but holds no collection is a FAIL, never a pass on nothing.
    Prints which one is used."""
    if not os.path.isdir(ir_data):
        print("ir-data: %s not found; using the bundled sample %s "
              "(cranfield)" % (ir_data, SAMPLE))
        return SAMPLE
    if not collections(ir_data):
        sys.exit("FAIL: %s holds no collection (no */docs.tsv)" % ir_data)
    print("ir-data: %s (%s)" % (ir_data, ", ".join(collections(ir_data))))
    return ir_data


def gpu_unavailable(binary, ir_data, work):
    """Why the GPU engine cannot run here (no device, or built without
    CUDA), or None.  Any other failure of the probe fails the test: a GPU
    engine that crashes on a device machine is not a skip.  The CPU twins
    (XG_GPU_TWINS=1) always can."""
    if os.environ.get("XG_GPU_TWINS") == "1":
        return None
    probe = os.path.join(work, "probe")
    build(binary, os.path.join(ir_data, collections(ir_data)[0], "docs.tsv"),
          probe)
    p = run_any([binary, "search", "--db", probe, "--engine", "gpu", "probe"])
    if p.returncode == 0:
        return None
    why = p.stderr.strip()
    if p.returncode == 1 and any(n in why for n in NO_DEVICE):
        return why
    sys.exit("FAIL: the GPU engine failed its probe (exit %d), not for want "
             "of a device:\n%s%s" % (p.returncode, p.stdout, p.stderr))


def skip_reason(binary, ir_data, work, engine):
    """Why a driver over the ir-data collections must skip (exit 77), or
    None; creates work.  Only a missing GPU is a reason: without ir-data
    the drivers use the bundled sample (resolve_ir_data)."""
    os.makedirs(work, exist_ok=True)
    why = engine == "gpu" and gpu_unavailable(binary, ir_data, work)
    return "GPU engine unavailable: %s" % why if why else None


def collections(ir_data, only=None, strict=False):
    """The ir-data collections with a docs.tsv, sorted; `only` a
    comma-separated subset.  On the bundled sample, `only` falls back to
    the sample's collections when none of it is there (said on stdout).
    strict: FAIL when the result is empty."""
    colls = sorted(d for d in os.listdir(ir_data)
                   if os.path.isfile(os.path.join(ir_data, d, "docs.tsv")))
    picked = [c for c in colls if c in only.split(",")] if only else colls
    if not picked and only and os.path.abspath(ir_data) == SAMPLE:
        print("--only %s: not in the bundled sample; using %s" %
              (only, ", ".join(colls)))
        picked = colls
    if strict and not picked:
        sys.exit("FAIL: no collection to test in %s (only=%s)" %
                 (ir_data, only))
    return picked


class Tally:
    """Counts what a driver compared; finish() fails a run that compared
    nothing."""
    def __init__(self):
        self.n = {}

    def add(self, what, n=1):
        self.n[what] = self.n.get(what, 0) + n

    def finish(self, label):
        total = sum(self.n.values())
        if total == 0:
            sys.exit("FAIL %s: nothing was compared" % label)
        print("%s: compared %s" % (label, ", ".join(
            "%d %s" % (v, k) for k, v in sorted(self.n.items()))))


def xapian_module():
    """python3-xapian (Debian's, also from another Python 3 of the same
    version); a missing one is a FAIL naming tests/deps.sh, which installs
    it, never a silent skip."""
    try:
        import xapian
    except ImportError:
        sys.path.append("/usr/lib/python3/dist-packages")
        try:
            import xapian
        except ImportError as e:
            sys.exit("FAIL: python3-xapian is needed (tests/deps.sh installs "
                     "it): %s" % e)
    return xapian


def add_values(path):
    """Give the documents of the database at path values as Omega and
    applications store them: slot 0 a 4-byte big-endian time, slot 2
    sortable_serialise() of a size (Omega's size: ranges), slot 5 a short
    string on about two documents in five."""
    import random
    import struct
    xapian = xapian_module()
    w = xapian.WritableDatabase(path, xapian.DB_OPEN)
    for d in range(1, w.get_lastdocid() + 1):
        try:
            doc = w.get_document(d)
        except xapian.DocNotFoundError:
            continue
        r = random.Random(d)
        doc.add_value(0, struct.pack(">I", 1500000000 + r.randrange(400000000)))
        doc.add_value(2, xapian.sortable_serialise(r.randrange(100, 5000)))
        if r.random() < 0.4:
            doc.add_value(5, chr(97 + r.randrange(26)) * (1 + r.randrange(5)))
        w.replace_document(d, doc)
    w.commit()
    w.close()


def partial_texts(queries):
    """Each query of a queries.tsv as typed so far: its last word cut to
    2-5 letters (what FLAG_PARTIAL completes)."""
    texts = []
    with open(queries) as f:
        for i, line in enumerate(f):
            if "\t" not in line:
                continue
            w = re.findall(r"[a-z]+", line.split("\t", 1)[1].lower())
            if w:
                texts.append(" ".join(w[:-1] + [w[-1][:2 + i % 4]]))
    return texts


def size_range_texts(queries):
    """Each query of a queries.tsv with one of Omega's size: ranges (A..B,
    A.., ..B, an empty B..A), and each range alone."""
    texts = []
    with open(queries) as f:
        for i, line in enumerate(f):
            if "\t" not in line:
                continue
            t = line.rstrip("\n").split("\t", 1)[1]
            lo = (100, 300, 500, 700, 900)[i % 5]
            hi = lo + (50, 400, 1200, 3000)[i % 4]
            r = ("size:%d..%d" % (lo, hi), "size:%d.." % lo,
                 "size:..%d" % hi, "size:%d..%d" % (hi, lo))[i % 4]
            texts += ["%s %s" % (t, r), r]
    return texts


def compare_term_weights(label, by_term, db_path, bm25, ref_bin, terms=None):
    """by_term (term -> {docid: "%.17g" weight}, as weight --db/--tsv
    write) against stock Xapian's own one-term queries on db_path
    (Enquire, BM25Weight(bm25)), as tests/term_weights.cc (ref_bin) prints
    them: every posting of each term of `terms` (default: every term), and
    the same set of terms as the database's (every term with postings).
    FAIL on the first difference; returns (terms, postings) compared."""
    out = run([ref_bin, db_path] + ([bm25] if bm25 else []))
    stock = {}
    for line in out.splitlines():
        term, docid, w = line.split("\t")
        stock.setdefault(term, {})[int(docid)] = w
    if terms is None:
        missing = sorted(set(stock) - set(by_term))[:5]
        extra = sorted(set(by_term) - set(stock))[:5]
        if missing or extra:
            sys.exit("FAIL %s: terms not as in the database: missing %s, "
                     "extra %s" % (label, missing, extra))
        terms = sorted(by_term)
    postings = 0
    for term in terms:
        want, got = by_term[term], stock.get(term, {})
        if got != want:
            bad = sorted(d for d in set(want) | set(got)
                         if got.get(d) != want.get(d))[:3]
            sys.exit("FAIL %s: term %r: %d postings, %d from Xapian's "
                     "one-term query; e.g. (docid, ours, Xapian's) %s" %
                     (label, term, len(want), len(got),
                      [(d, want.get(d), got.get(d)) for d in bad]))
        postings += len(want)
    if not terms:
        sys.exit("FAIL %s: no term compared" % label)
    return len(terms), postings
