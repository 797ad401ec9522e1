"""Replay of attnscope's interval estimators (issue 55) on recorded sessions.
current_*: a Python port of src/metrics/bootstrap.rs (median_interval_placed, combine, segments,
quick_half_width). cycle_*: the proposed cycle-aware replacement."""
import numpy as np

T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042]
def t975(df): return T975[min(max(int(df), 1), 30) - 1]
SEGMENTS, MIN_PLACEMENTS, MIN_BLOCKS, ROUNDS = 6, 3, 5, 2000

class Grid:
    def __init__(self, blocks, step):
        self.step = max(step, 1.0)
        cells = [np.round(b / self.step).astype(np.int64) for b in blocks]
        allc = np.unique(np.concatenate(cells))
        self.values = allc * self.step
        self.M = np.zeros((len(blocks), len(allc)))
        for i, c in enumerate(cells):
            idx = np.searchsorted(allc, c)
            self.M[i] = np.bincount(idx, minlength=len(allc))
        self.C = np.vstack([np.zeros(len(allc)), np.cumsum(self.M, axis=0)])  # prefix sums
    def med_counts(self, counts):
        return grouped_median(self.values, counts, self.step)
    def med_range(self, a, b):
        return self.med_counts(self.C[b] - self.C[a])
    def med_idx(self, idx):
        return self.med_counts(self.M[np.asarray(idx)].sum(axis=0))

def grouped_median(values, counts, step):
    total = counts.sum()
    half = total / 2.0
    cum = np.cumsum(counts)
    i = int(np.searchsorted(cum, half))  # first cum >= half
    # skip zero-count cells (cum equal to previous)
    while counts[i] == 0: i += 1
    below = cum[i] - counts[i]
    return values[i] - step / 2 + (half - below) / counts[i] * step

def grouped_median_batch(values, W, step):
    """row-wise grouped medians of count matrix W."""
    out = np.empty(W.shape[0])
    for r in range(W.shape[0]):
        out[r] = grouped_median(values, W[r], step)
    return out

def mean_var(x):
    x = np.asarray(x, float); k = len(x)
    return x.mean(), ((x - x.mean()) ** 2).sum() / max(k - 1, 1)

def combine(by_place, by_seg, se_within):
    c, k = len(by_place), len(by_seg)
    up, us = c >= MIN_PLACEMENTS, k >= 3
    if not up and not us: return None
    w2 = se_within ** 2 if np.isfinite(se_within) else 0.0
    tp = mean_var(by_place)[1] / c if up else 0.0
    if us:
        v = mean_var(by_seg)[1]
        td = max(v / k - w2, 0.0) if up else v / k
    else: td = 0.0
    se2 = tp + td
    den = (tp * tp / (c - 1) if up else 0) + (td * td / (k - 1) if us else 0)
    df = max(se2 * se2 / den, 1.0) if den > 0 else 30.0
    se = np.sqrt(se2)
    return dict(se=se, df=df, half=t975(np.floor(df)) * se, tp=tp, td=td, c=c, k=k)

def segments(n, nseg=SEGMENTS):
    k = min(n // 2, nseg)
    if k < 3: return []
    return [(s * n // k, (s + 1) * n // k) for s in range(k)]

def by_placement(place, fn):
    out = []
    for p in sorted(set(place)):
        idx = [i for i, q in enumerate(place) if q == p]
        v = fn(idx)
        if np.isfinite(v): out.append(v)
    return out

def log_half(c, lo, hi):
    h = max(np.log(hi / c), np.log(c / lo))
    return max(h, 0.0) if np.isfinite(h) else 0.0

def bootstrap_interval(g, n, rounds, rng):
    W = rng.multinomial(n, np.full(n, 1.0 / n), size=rounds).astype(float) @ g.M
    d = np.sort(grouped_median_batch(g.values, W, g.step))
    at = lambda q: d[min(int(round(q * (len(d) - 1))), len(d) - 1)]
    return at(0.025), at(0.975)

def current_final(blocks, place, step, rounds=ROUNDS, seed=17, seg_fn=None):
    """median_interval_placed: returns (median, run_low, run_high, parts)."""
    n = len(blocks)
    if n < MIN_BLOCKS: return None
    g = Grid(blocks, step)
    med = g.med_range(0, n)
    rng = np.random.default_rng(seed)
    lo, hi = bootstrap_interval(g, n, rounds, rng)
    se_w = log_half(med, lo, hi) / 1.96
    segs = (seg_fn or segments)(n)
    by_seg = [np.log(g.med_range(a, b)) for a, b in segs]
    by_pl = by_placement(place, lambda idx: np.log(g.med_idx(idx)))
    p = combine(by_pl, by_seg, se_w)
    if p:
        lo = min(lo, med * np.exp(-p['half'])); hi = max(hi, med * np.exp(p['half']))
    if hi - lo < g.step:
        lo = min(lo, med - g.step / 2); hi = max(hi, med + g.step / 2)
    return med, lo, hi, p

def current_quick(batch_medians, place, step):
    logs = np.log(np.asarray(batch_medians, float)); n = len(logs)
    if n < MIN_BLOCKS: return None
    mean, var = mean_var(logs)
    se_w = np.sqrt(var / n)
    by_seg = [logs[a:b].mean() for a, b in segments(n)]
    by_pl = by_placement(list(place), lambda idx: logs[idx].mean())
    p = combine(by_pl, by_seg, se_w)
    half = max(p['half'] if p else 1.96 * se_w, 1.96 * se_w)
    sh = max(step, 1.0) / 2 / np.exp(mean)
    return max(half, sh), sh >= half

# ---------------- cycle-aware (proposed) ----------------
ACF_MIN = 0.3      # a cycle counts when the autocorrelation at its lag is at least this

def cycle_lag(x, acf_min=ACF_MIN):
    """Period of the batch log-medians in batches, from their autocorrelation: the lag of the
    highest peak after the ACF first goes negative, up to n/2 (two whole cycles in the run).
    None when there is no such peak of at least acf_min."""
    x = np.asarray(x, float); n = len(x)
    x = x - x.mean(); d = (x * x).sum()
    if n < 8 or d <= 0: return None
    r = np.array([(x[:-L] * x[L:]).sum() / d for L in range(1, n // 2 + 1)])
    neg = np.nonzero(r < 0)[0]
    if len(neg) == 0: return None
    L0 = neg[0]
    if L0 + 1 >= len(r): return None
    j = L0 + int(np.argmax(r[L0:]))
    # a peak counts when it is at least acf_min and beyond noise (2/sqrt(n), ~95% for white noise)
    return (j + 1) if r[j] >= max(acf_min, 2 / np.sqrt(n)) else None

def cycle_segments_fn(logs, acf_min=ACF_MIN):
    """segments() replaced: whole cycles when the run has a cycle and at least 3 of them,
    else the SEGMENTS stretches of today."""
    L = cycle_lag(logs, acf_min)
    def f(n):
        if L is not None and n // L >= 3:
            k = n // L
            return [(s * n // k, (s + 1) * n // k) for s in range(k)]
        return segments(n)
    return f, L

def batch_log_medians(blocks, step):
    return np.log([grouped_median_1(b, step) for b in blocks])

def grouped_median_1(b, step):
    g = Grid([b], step)
    return g.med_range(0, 1)

def cycle_final(blocks, place, step, rounds=ROUNDS, seed=17, acf_min=ACF_MIN):
    logs = batch_log_medians(blocks, step)
    f, L = cycle_segments_fn(logs, acf_min)
    out = current_final(blocks, place, step, rounds, seed, seg_fn=f)
    return out + (L,)

def cycle_quick(batch_medians, place, step, acf_min=ACF_MIN):
    logs = np.log(np.asarray(batch_medians, float)); n = len(logs)
    if n < MIN_BLOCKS: return None
    f, L = cycle_segments_fn(logs, acf_min)
    mean, var = mean_var(logs)
    se_w = np.sqrt(var / n)
    by_seg = [logs[a:b].mean() for a, b in f(n)]
    by_pl = by_placement(list(place), lambda idx: logs[idx].mean())
    p = combine(by_pl, by_seg, se_w)
    half = max(p['half'] if p else 1.96 * se_w, 1.96 * se_w)
    sh = max(step, 1.0) / 2 / np.exp(mean)
    return max(half, sh), sh >= half

# ---------- drift term variants ----------
def unit_var(u, mode):
    """variance of one unit's value about what the run's own time profile explains, and its df."""
    u = np.asarray(u, float); k = len(u)
    if mode == 'plain':
        return mean_var(u)[1], k - 1
    if mode == 'linear':          # residuals about a straight line in time (unit index)
        x = np.arange(k) - (k - 1) / 2
        b = (x * (u - u.mean())).sum() / (x * x).sum()
        r = u - u.mean() - b * x
        return (r * r).sum() / (k - 2), k - 2
    if mode in ('none', 'sum'):
        return 0.0, k - 1
    if mode == 'mssd':            # von Neumann: successive differences
        d = np.diff(u)
        return (d * d).sum() / (2 * (k - 1)), k - 1
    raise ValueError(mode)

def combine2(by_place, by_seg, se_within, mode):
    c, k = len(by_place), len(by_seg)
    up = c >= MIN_PLACEMENTS
    us = k >= (4 if mode == 'linear' else 3)
    if not up and not us: return None
    w2 = se_within ** 2 if np.isfinite(se_within) else 0.0
    tp = mean_var(by_place)[1] / c if up else 0.0
    dfs = 1
    if us:
        v, dfs = unit_var(by_seg, mode)
        td = max(v / k - w2, 0.0) if up else v / k
        if mode == 'sum': td, dfs = w2, 30
    else: td = 0.0
    se2 = tp + td
    den = (tp * tp / (c - 1) if up else 0) + (td * td / dfs if us else 0)
    df = max(se2 * se2 / den, 1.0) if den > 0 else 30.0
    se = np.sqrt(se2)
    return dict(se=se, df=df, half=t975(np.floor(df)) * se, tp=tp, td=td, c=c, k=k)

def units_fn(logs, cycles, acf_min=ACF_MIN, min_k=3):
    L = cycle_lag(logs, acf_min) if cycles else None
    def f(n):
        if L is not None and n // L >= min_k:
            k = n // L
            return [(s * n // k, (s + 1) * n // k) for s in range(k)]
        return segments(n)
    return f, L

def new_final(blocks, place, step, mode='linear', cycles=True, rounds=ROUNDS, seed=17, acf_min=ACF_MIN):
    n = len(blocks)
    g = Grid(blocks, step); med = g.med_range(0, n)
    lo, hi = bootstrap_interval(g, n, rounds, np.random.default_rng(seed))
    se_w = log_half(med, lo, hi) / 1.96
    logs = np.log([grouped_median_1(b, step) for b in blocks])
    f, L = units_fn(logs, cycles, acf_min, 4 if mode == 'linear' else 3)
    by_seg = [np.log(g.med_range(a, b)) for a, b in f(n)]
    by_pl = by_placement(list(place), lambda idx: np.log(g.med_idx(idx)))
    p = combine2(by_pl, by_seg, se_w, mode) if len(by_seg) >= 4 or mode != 'linear' else combine(by_pl, by_seg, se_w)
    if p:
        lo = min(lo, med * np.exp(-p['half'])); hi = max(hi, med * np.exp(p['half']))
    if hi - lo < g.step:
        lo = min(lo, med - g.step / 2); hi = max(hi, med + g.step / 2)
    return med, lo, hi, p, L

def new_quick(batch_medians, place, step, mode='linear', cycles=True, acf_min=ACF_MIN):
    logs = np.log(np.asarray(batch_medians, float)); n = len(logs)
    if n < MIN_BLOCKS: return None
    f, L = units_fn(logs, cycles, acf_min, 4 if mode == 'linear' else 3)
    mean, var = mean_var(logs)
    se_w = np.sqrt(var / n)
    by_seg = [logs[a:b].mean() for a, b in f(n)]
    by_pl = by_placement(list(place), lambda idx: logs[idx].mean())
    p = combine2(by_pl, by_seg, se_w, mode) if len(by_seg) >= 4 or mode != 'linear' else combine(by_pl, by_seg, se_w)
    half = max(p['half'] if p else 1.96 * se_w, 1.96 * se_w)
    sh = max(step, 1.0) / 2 / np.exp(mean)
    return max(half, sh), sh >= half

# ---------- phase-stratified bootstrap ----------
def strata_of(n, L):
    """batch i's phase in the cycle: i mod L (cycles cut from the run's first batch)."""
    return [list(range(f, n, L)) for f in range(L)]

def stratified_bootstrap(g, strata, rounds, rng, rescale=True):
    n = g.M.shape[0]
    W = np.zeros((rounds, n))
    for s in strata:
        m = len(s)
        if m == 0: continue
        W[:, s] = rng.multinomial(m, np.full(m, 1.0 / m), size=rounds)
    d = np.sort(grouped_median_batch(g.values, W @ g.M, g.step))
    med = g.med_range(0, n)
    at = lambda q: d[min(int(round(q * (len(d) - 1))), len(d) - 1)]
    lo, hi = at(0.025), at(0.975)
    if rescale:   # a bootstrap inside strata of m draws has (m-1)/m of the variance
        m = np.median([len(s) for s in strata])
        f = np.sqrt(m / (m - 1))
        lo, hi = med * np.exp(np.log(lo / med) * f), med * np.exp(np.log(hi / med) * f)
    return lo, hi

def strat_final(blocks, place, step, mode='linear', rounds=ROUNDS, seed=17, acf_min=ACF_MIN, min_cycles=3):
    n = len(blocks)
    g = Grid(blocks, step); med = g.med_range(0, n)
    logs = np.log([grouped_median_1(b, step) for b in blocks])
    L = cycle_lag(logs, acf_min)
    cyc = L is not None and n // L >= min_cycles
    rng = np.random.default_rng(seed)
    if cyc:
        lo, hi = stratified_bootstrap(g, strata_of(n, L), rounds, rng)
        k = n // L
        segs = [(s * n // k, (s + 1) * n // k) for s in range(k)]
    else:
        lo, hi = bootstrap_interval(g, n, rounds, rng)
        segs = segments(n)
    se_w = log_half(med, lo, hi) / 1.96
    by_seg = [np.log(g.med_range(a, b)) for a, b in segs]
    by_pl = by_placement(list(place), lambda idx: np.log(g.med_idx(idx)))
    use_mode = mode if (cyc and (mode != 'linear' or len(segs) >= 4)) else 'plain'
    p = combine2(by_pl, by_seg, se_w, use_mode)
    if p:
        lo = min(lo, med * np.exp(-p['half'])); hi = max(hi, med * np.exp(p['half']))
    if hi - lo < g.step:
        lo = min(lo, med - g.step / 2); hi = max(hi, med + g.step / 2)
    return med, lo, hi, p, L

def strat_quick(batch_medians, place, step, mode='linear', acf_min=ACF_MIN, min_cycles=3):
    logs = np.log(np.asarray(batch_medians, float)); n = len(logs)
    if n < MIN_BLOCKS: return None
    L = cycle_lag(logs, acf_min)
    cyc = L is not None and n // L >= min_cycles
    mean, var = mean_var(logs)
    if cyc:
        st = strata_of(n, L)
        se_w = np.sqrt(sum(mean_var(logs[s])[1] / len(s) for s in st if len(s) > 1)) / L
        k = n // L; segs = [(s * n // k, (s + 1) * n // k) for s in range(k)]
    else:
        se_w = np.sqrt(var / n); segs = segments(n)
    by_seg = [logs[a:b].mean() for a, b in segs]
    by_pl = by_placement(list(place), lambda idx: logs[idx].mean())
    use_mode = mode if (cyc and (mode != 'linear' or len(segs) >= 4)) else 'plain'
    p = combine2(by_pl, by_seg, se_w, use_mode)
    half = max(p['half'] if p else 1.96 * se_w, 1.96 * se_w)
    sh = max(step, 1.0) / 2 / np.exp(mean)
    return max(half, sh), sh >= half

# ---------- proposed: phase-stratified bootstrap + placements + stopping-time term ----------
def stop_term_logs(logs, L):
    """How far the run's value moves had it stopped one cycle (L batches) earlier: log-mean of all
    batches minus that of all but the last L (a rerun stopping by convergence lands a cycle away)."""
    n = len(logs)
    if L is None or n - L < L: return 0.0
    return abs(np.mean(logs) - np.mean(logs[:n - L]))

def prop_final(blocks, place, step, converged, rounds=ROUNDS, seed=17, acf_min=ACF_MIN, min_cycles=3):
    n = len(blocks)
    g = Grid(blocks, step); med = g.med_range(0, n)
    logs = np.log([grouped_median_1(b, step) for b in blocks])
    L = cycle_lag(logs, acf_min)
    cyc = L is not None and n // L >= min_cycles
    rng = np.random.default_rng(seed)
    if not cyc:   # no cycle (or under 3 of them): today's estimator, unchanged
        out = current_final(blocks, place, step, rounds, seed)
        return out + (L,)
    lo, hi = stratified_bootstrap(g, strata_of(n, L), rounds, rng)
    se_w = log_half(med, lo, hi) / 1.96
    by_pl = by_placement(list(place), lambda idx: np.log(g.med_idx(idx)))
    c = len(by_pl)
    tp = mean_var(by_pl)[1] / c if c >= MIN_PLACEMENTS else 0.0
    st = (np.log(med) - np.log(g.med_range(0, n - L))) if converged else 0.0
    se2 = se_w ** 2 + tp + st ** 2
    df = c - 1 if c >= MIN_PLACEMENTS else n // L - 1
    half = t975(df) * np.sqrt(se2)
    lo = min(lo, med * np.exp(-half)); hi = max(hi, med * np.exp(half))
    if hi - lo < g.step:
        lo = min(lo, med - g.step / 2); hi = max(hi, med + g.step / 2)
    return med, lo, hi, dict(se=np.sqrt(se2), tp=tp, st=st, df=df, k=n // L), L

def prop_quick(batch_medians, place, step, acf_min=ACF_MIN, min_cycles=3):
    logs = np.log(np.asarray(batch_medians, float)); n = len(logs)
    if n < MIN_BLOCKS: return None
    L = cycle_lag(logs, acf_min)
    if not (L is not None and n // L >= min_cycles):
        return current_quick(batch_medians, place, step)
    st_ = strata_of(n, L)
    se_w2 = sum(mean_var(logs[s])[1] / len(s) for s in st_ if len(s) > 1) / L ** 2
    m = np.median([len(s) for s in st_]); se_w2 *= m / (m - 1)
    by_pl = by_placement(list(place), lambda idx: logs[idx].mean())
    c = len(by_pl)
    tp = mean_var(by_pl)[1] / c if c >= MIN_PLACEMENTS else 0.0
    st = stop_term_logs(logs, L)
    df = c - 1 if c >= MIN_PLACEMENTS else n // L - 1
    half = t975(df) * np.sqrt(se_w2 + tp + st ** 2)
    sh = max(step, 1.0) / 2 / np.exp(logs.mean())
    return max(half, sh), sh >= half

# ---------- prop2: phase-stratified, placements on phase residuals, no stop term ----------
def prop2_final(blocks, place, step, converged=False, rounds=ROUNDS, seed=17, stop=False):
    n = len(blocks)
    g = Grid(blocks, step); med = g.med_range(0, n)
    logs = np.log([grouped_median_1(b, step) for b in blocks])
    x = logs - logs.mean(); d = (x*x).sum()
    r1 = (x[:-1]*x[1:]).sum()/d if d > 0 else 0
    L = cycle_lag(logs) if r1 >= 0.7 else None
    if not (L is not None and n // L >= 3):
        return current_final(blocks, place, step, rounds, seed) + (None,)
    rng = np.random.default_rng(seed)
    st = strata_of(n, L)
    lo, hi = stratified_bootstrap(g, st, rounds, rng, rescale=False)
    sizes = sorted(len(s) for s in st); m = sizes[len(sizes)//2]; f = np.sqrt(m/(m-1))
    lo, hi = med*np.exp(np.log(lo/med)*f), med*np.exp(np.log(hi/med)*f)
    se_w = log_half(med, lo, hi) / 1.96
    pm = np.zeros(n)
    for s in st: pm[s] = logs[s].mean()
    resid = logs - pm
    pl = np.asarray(place); ids = sorted(set(place))
    by_pl = [resid[pl == p].mean() for p in ids]
    c = len(by_pl)
    tp = mean_var(by_pl)[1] / c if c >= MIN_PLACEMENTS else 0.0
    stt = (np.log(med) - np.log(g.med_range(0, n - L))) if (stop and converged) else 0.0
    se2 = max(tp, se_w**2) + stt**2 if c >= MIN_PLACEMENTS else se_w**2 + stt**2
    df = c - 1 if c >= MIN_PLACEMENTS else n // L - 1
    half = t975(df) * np.sqrt(se2)
    lo = min(lo, med * np.exp(-half)); hi = max(hi, med * np.exp(half))
    if hi - lo < g.step:
        lo = min(lo, med - g.step / 2); hi = max(hi, med + g.step / 2)
    return med, lo, hi, dict(se=np.sqrt(se2), tp=tp, se_w=se_w, df=df, k=n // L), L

def prop3_final(blocks, place, step, converged=False, rounds=ROUNDS, seed=17):
    n = len(blocks)
    logs = np.log([grouped_median_1(b, step) for b in blocks])
    x = logs - logs.mean(); d = (x*x).sum()
    r1 = (x[:-1]*x[1:]).sum()/d if d > 0 else 0
    L = cycle_lag(logs) if r1 >= 0.7 else None
    if L is not None and n // L >= 3:
        w = (n // L) * L
        return prop2_final(blocks[:w], place[:w], step)
    return current_final(blocks, place, step, rounds, seed) + (None,)

def partial_var(logs, L):
    n = len(logs); ph = np.array([logs[f::L].mean() for f in range(L)]); mu = ph.mean()
    ext = np.concatenate([ph, ph]); acc = []
    for r in range(L):
        for f in range(L):
            w = ext[f:f+r].mean() if r > 0 else mu
            acc.append((r / n * (w - mu)) ** 2)
    return float(np.mean(acc))

def prop4_final(blocks, place, step, converged=False, rounds=ROUNDS, seed=17):
    n = len(blocks)
    logs = np.log([grouped_median_1(b, step) for b in blocks])
    x = logs - logs.mean(); d = (x*x).sum()
    r1 = (x[:-1]*x[1:]).sum()/d if d > 0 else 0
    L = cycle_lag(logs) if r1 >= 0.7 else None
    if not (L is not None and n // L >= 3):
        return current_final(blocks, place, step, rounds, seed) + (None,)
    med, lo, hi, p, L = prop2_final(blocks, place, step)
    se2 = p['se'] ** 2 + partial_var(logs, L)
    half = t975(p['df']) * np.sqrt(se2)
    lo = min(lo, med * np.exp(-half)); hi = max(hi, med * np.exp(half))
    return med, lo, hi, p, L

def propB_final(blocks, place, step, converged=False, rounds=ROUNDS, seed=17):
    n = len(blocks)
    logs = np.log([grouped_median_1(b, step) for b in blocks])
    x = logs - logs.mean(); d = (x*x).sum()
    r1 = (x[:-1]*x[1:]).sum()/d if d > 0 else 0
    L = cycle_lag(logs) if r1 >= 0.7 else None
    if not (L is not None and n // L >= 3):
        return current_final(blocks, place, step, rounds, seed) + (None,)
    st = strata_of(n, L)
    within = sum(mean_var(logs[s])[1] / len(s) for s in st if len(s) > 1) / L**2
    sizes = sorted(len(s) for s in st); m = sizes[len(sizes)//2]
    se_w = np.sqrt(within * m / (m - 1))
    pm = np.zeros(n)
    for s in st: pm[s] = logs[s].mean()
    resid = logs - pm; pl = np.asarray(place)
    by_pl = [resid[pl == p].mean() for p in sorted(set(place))]; c = len(by_pl)
    if c >= 3: se = np.sqrt(max(mean_var(by_pl)[1] / c, se_w**2)); df = c - 1
    else: se = se_w; df = n // L - 1
    med = np.exp(logs.mean()); half = t975(df) * se
    lo, hi = med*np.exp(-half), med*np.exp(half)
    if hi - lo < step: lo, hi = med - step/2, med + step/2
    return med, lo, hi, None, L

def prop5_final(blocks, place, step, converged=False, rounds=ROUNDS, seed=17):
    n = len(blocks)
    logs = np.log([grouped_median_1(b, step) for b in blocks])
    x = logs - logs.mean(); d = (x*x).sum()
    r1 = (x[:-1]*x[1:]).sum()/d if d > 0 else 0
    L = cycle_lag(logs) if r1 >= 0.7 else None
    if L is not None and n // L >= CYC_MIN:
        return prop2_final(blocks, place, step)
    return current_final(blocks, place, step, rounds, seed) + (None,)

CYC_MIN = 4
