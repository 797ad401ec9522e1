import sys, glob, re, pickle, os
from load import load_session
from est import *
from replay import rerun, score
def load(base, pre):
    cache = f'/tmp/est55/c-{base.replace("/","_")}-{pre}.pkl'
    if os.path.exists(cache): return pickle.load(open(cache,'rb'))
    files = sorted(glob.glob(f'{base}/{pre}-*.jsonl.zst'), key=lambda p: int(re.findall(r'-(\d+)\.jsonl', p)[0]))
    d = [load_session(f) for f in files]; pickle.dump(d, open(cache,'wb')); return d
SETS = [('r187','/tmp/r187/resolution-20261129T170750Z/sessions','b600'),('r187','/tmp/r187/resolution-20261129T170750Z/sessions','b50')]
for tag, base, pre in SETS:
    runs = load(base, pre)
    for v in runs[0]:
        for name in sys.argv[1:]:
            pts = []
            for r in runs:
                b = r[v]['batches']; step = r[v]['done']['resolution_ns']; conv = r[v]['done']['stop_reason'].startswith('conv')
                blocks = [x['samples'] for x in b]; place = [x['place'] for x in b]
                if name == 'recorded':
                    dn = r[v]['done']; med = dn['median_ns']; lo, hi = dn['ci_low_ns'], dn['ci_high_ns']; pts.append((med, lo, hi)); continue
                if name == 'current': med, lo, hi, p = current_final(blocks, place, step)
                elif name == 'prop2': med, lo, hi, p, L = prop2_final(blocks, place, step, conv)
                elif name == 'prop3': med, lo, hi, p, L = prop3_final(blocks, place, step)
                elif name == 'prop4': med, lo, hi, p, L = prop4_final(blocks, place, step)
                elif name == 'propB': med, lo, hi, p, L = propB_final(blocks, place, step)
                elif name == 'prop5': med, lo, hi, p, L = prop5_final(blocks, place, step)
                pts.append((med,) + rerun(med, lo, hi))
            inside, sharp, hw, s = score(pts)
            print(f'| {tag} {pre} | {v[:22]} | {name} | {inside}/90 | {sharp:.2f} | ±{hw:.3f}% | {s:.3f}% |', flush=True)
