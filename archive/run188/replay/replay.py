"""Replay: python3 replay.py [--stop] — scores current vs cycle-aware intervals on run168/run167."""
import sys, statistics
from load import load_all
from est import *

def rerun(med, lo, hi):
    h = np.sqrt(2) * log_half(med, lo, hi)
    return med * np.exp(-h), med * np.exp(h)

def score(pts):
    ms = [p[0] for p in pts]
    s = statistics.stdev(ms) / statistics.mean(ms) * 100
    need = 1.96 * 2 ** 0.5 * s
    hw = statistics.median([(hi - lo) / 2 / m * 100 for m, lo, hi in pts])
    inside = sum(lo <= pts[j][0] <= hi for i, (_, lo, hi) in enumerate(pts) for j in range(len(pts)) if i != j)
    return inside, hw / need, hw, s

def stop_point(b, step, quick, target=0.005, min_s=0.5, max_s=5.0, every=0.1):
    """Index (exclusive) where measure_placed's stopping rule would have stopped with `quick`."""
    t0 = b[0]['t_us']; meds = []; pl = []; last = -1e9
    for i, x in enumerate(b):
        meds.append(grouped_median_1(x['samples'], step)); pl.append(x['place'])
        el = (x['t_us'] - t0) / 1e6 + 0.0258  # elapsed at the end of batch i (≈ one batch after the first)
        if el - last >= every or el >= max_s:
            if el >= min_s:
                last = el
                q = quick(meds, pl, step)
                if q and (q[0] < target or q[1]): return i + 1, 'conv'
        if el >= max_s: return i + 1, 'time'
    return len(b), 'end'

def main(stop=False, acf_min=ACF_MIN):
    data = load_all()
    print('| shape | variant | estimator | runs stopped early | coverage | sharpness | median printed ± | s |')
    print('|---|---|---|---|---|---|---|---|')
    for shape, runs in data.items():
        for v in runs[0]:
            res = {'current': [], 'cycle': []}; lags = []; cut = {'current': [], 'cycle': []}
            for r in runs:
                b = r[v]['batches']; step = r[v]['done']['resolution_ns']
                for name in res:
                    n = len(b)
                    if stop:
                        qf = current_quick if name == 'current' else (lambda m, p, s: cycle_quick(m, p, s, acf_min))
                        n, why = stop_point(b, step, qf)
                    cut[name].append(n)
                    blocks = [x['samples'] for x in b[:n]]; place = [x['place'] for x in b[:n]]
                    if name == 'current':
                        med, lo, hi, p = current_final(blocks, place, step)
                    else:
                        med, lo, hi, p, L = cycle_final(blocks, place, step, acf_min=acf_min); lags.append((L, p['k'] if p else 0))
                    res[name].append((med,) + rerun(med, lo, hi))
            for name, pts in res.items():
                inside, sharp, hw, s = score(pts)
                extra = ' lags(k) ' + ' '.join(f'{L}({k})' for L, k in lags) if name == 'cycle' else ''
                cuts = ' '.join(str(c) for c in cut[name]) if stop else '-'
                print(f'| {shape} | {v[:24]} | {name} | {cuts} | {inside}/90 | {sharp:.2f} | ±{hw:.3f}% | {s:.3f}% |{extra}')

if __name__ == '__main__':
    main(stop='--stop' in sys.argv)
