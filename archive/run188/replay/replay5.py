"""Final rule of issue 55 (commit 8bf17a7), replayed on recorded sessions: the stopping rule waits while
the batches move as a slow wave (lag-1 autocorrelation >= 0.7) whose cycle has not been seen 4 times whole,
else reads stretches (current_quick); the final interval uses the cycles (prop2_final) only for a run that
did not stop on its interval. A run whose recording ends before the new rule would stop is scored as
recorded (marked *)."""
import sys, glob, re, pickle, os
from load import load_session
from est import *
from replay import rerun, score, stop_point
def r1(x):
    x = np.asarray(x) - np.mean(x); d = (x*x).sum()
    return (x[:-1]*x[1:]).sum()/d if d > 0 else 0
def rhythm(logs):
    n = len(logs)
    if n < 8 or r1(logs) < 0.7: return 'steady', None
    L = cycle_lag(logs)
    return ('cycles', L) if (L is not None and n // L >= 4) else ('unresolved', None)
def quick(m, p, s):
    logs = np.log(m)
    if len(logs) >= MIN_BLOCKS and rhythm(logs)[0] == 'unresolved': return None
    return current_quick(m, p, s)
def final(blocks, place, step, conv):
    logs = np.log([grouped_median_1(b, step) for b in blocks])
    kind, L = rhythm(logs)
    if kind == 'cycles' and not conv: return prop2_final(blocks, place, step)[:3]
    return current_final(blocks, place, step)[:3]
def load(base, pre):
    cache = f'/tmp/est55/c-{base.replace("/","_")}-{pre}.pkl'
    if os.path.exists(cache): return pickle.load(open(cache,'rb'))
    files = sorted(glob.glob(f'{base}/{pre}-*.jsonl.zst'), key=lambda p: int(re.findall(r'-(\d+)\.jsonl', p)[0]))
    d = [load_session(f) for f in files]; pickle.dump(d, open(cache,'wb')); return d
R = lambda n, t: (f'r{n}', f'/tmp/r{n}/{t}/sessions')
SETS = [('run168','/tmp/est55/data/run168/sessions','b50'),('run167','/tmp/est55/data/run167/sessions','b600')]
for n, t in [(185,'resolution-20261129T161954Z'),(186,'resolution-20261129T165207Z'),(187,'resolution-20261129T170750Z'),(188,'resolution-20261129T172030Z')]:
    for pre in ('b6','b50','b600'):
        if glob.glob(f'/tmp/r{n}/{t}/sessions/{pre}-*'): SETS.append((f'run{n}', f'/tmp/r{n}/{t}/sessions', pre))
print('| run | shape | variant | inside | printed ± ÷ 1.96·√2·s | printed ± (median) | s | batches used (* recording ended first) |')
print('|---|---|---|---|---|---|---|---|')
for tag, base, pre in SETS:
    runs = load(base, pre)
    for v in runs[0]:
        pts, ns = [], []
        for r in runs:
            b = r[v]['batches']; step = r[v]['done']['resolution_ns']
            n, why = stop_point(b, step, quick)
            if why == 'end' and r[v]['done']['stop_reason'] != 'time_limit': why = 'end*'
            blocks = [x['samples'] for x in b[:n]]; place = [x['place'] for x in b[:n]]
            med, lo, hi = final(blocks, place, step, why == 'conv')
            pts.append((med,) + rerun(med, lo, hi)); ns.append(f'{n}{"*" if why=="end*" else ""}')
        inside, sharp, hw, s = score(pts)
        print(f'| {tag} | {pre} | {v[:24]} | {inside}/90 | {sharp:.2f} | ±{hw:.3f}% | {s:.3f}% | {" ".join(ns)} |', flush=True)
