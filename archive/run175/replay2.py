"""python3 replay2.py [--stop]: current vs candidate estimators, per shape x variant.
--stop: each run truncated where measure_placed's stopping rule (min 0.5 s, target 0.5%, check every 0.1 s)
would have stopped with that estimator's quick_half_width (a run can't go past its recording)."""
import sys
from load import load_all
from est import *
from replay import rerun, score, stop_point

CANDS = {
    'current': None,
    'cyc+plain': dict(mode='plain', cycles=True),
    'cyc+linear': dict(mode='linear', cycles=True),
    'cyc+mssd': dict(mode='mssd', cycles=True),
    'seg6+linear': dict(mode='linear', cycles=False),
    'seg6+mssd': dict(mode='mssd', cycles=False),
    'strat+plain': dict(strat=True, mode='plain'),
    'strat+linear': dict(strat=True, mode='linear'),
    'strat+mssd': dict(strat=True, mode='mssd'),
    'strat+none': dict(strat=True, mode='none'),
    'strat+sum': dict(strat=True, mode='sum'),
    'proposed': dict(prop=True),
}

def run_one(b, step, name, stop, done_reason=''):
    kw = CANDS[name]; n = len(b); why = ''
    if stop:
        if kw is None: qf = current_quick
        elif kw.get('prop'): qf = prop_quick
        elif kw.get('strat'): qf = lambda m, p, s: strat_quick(m, p, s, mode=kw['mode'])
        else: qf = lambda m, p, s: new_quick(m, p, s, **kw)
        n, why = stop_point(b, step, qf)
    blocks = [x['samples'] for x in b[:n]]; place = [x['place'] for x in b[:n]]
    if kw is None:
        med, lo, hi, p = current_final(blocks, place, step); L = None
    elif kw.get('prop'):
        conv = (why == 'conv') if stop else (done_reason != 'time_limit')
        med, lo, hi, p, L = prop_final(blocks, place, step, conv)
    elif kw.get('strat'):
        med, lo, hi, p, L = strat_final(blocks, place, step, mode=kw['mode'])
    else:
        med, lo, hi, p, L = new_final(blocks, place, step, **kw)
    return (med,) + rerun(med, lo, hi), n, L, p

def main(stop, names):
    data = load_all()
    print('| shape | variant | estimator | coverage | sharpness | median printed ± | s | batches used |')
    print('|---|---|---|---|---|---|---|---|')
    for shape, runs in data.items():
        for v in runs[0]:
            for name in names:
                pts, ns = [], []
                for r in runs:
                    pt, n, L, p = run_one(r[v]['batches'], r[v]['done']['resolution_ns'], name, stop, r[v]['done']['stop_reason'])
                    pts.append(pt); ns.append(n)
                inside, sharp, hw, s = score(pts)
                print(f'| {shape} | {v[:24]} | {name} | {inside}/90 | {sharp:.2f} | ±{hw:.3f}% | {s:.3f}% | {" ".join(map(str, ns))} |', flush=True)

if __name__ == '__main__':
    names = [a for a in sys.argv[1:] if not a.startswith('--')] or list(CANDS)
    main('--stop' in sys.argv, names)
