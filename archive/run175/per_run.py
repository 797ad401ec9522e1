import sys
from load import load_all
from replay2 import run_one
data = load_all()
shape, vi = sys.argv[1], int(sys.argv[2])
runs = data[shape]; v = list(runs[0])[vi]
for name in ['current', 'proposed']:
    pts = [run_one(r[v]['batches'], r[v]['done']['resolution_ns'], name, False, r[v]['done']['stop_reason']) for r in runs]
    ms = [p[0][0] for p in pts]
    for i, (pt, n, L, p) in enumerate(pts):
        m, lo, hi = pt
        miss = sum(not (lo <= x <= hi) for j, x in enumerate(ms) if j != i)
        extra = ' se %.3f tp %.3f st %.3f k %s' % (p['se']*100, p['tp']**.5*100, p.get('st', 0)*100, p.get('k')) if p and 'st' in p else ''
        print(name, i+1, 'n', n, 'L', L, '%.1f [%.1f, %.1f] ±%.3f%% misses %d%s' % (m/1e3, lo/1e3, hi/1e3, (hi-lo)/2/m*100, miss, extra))
