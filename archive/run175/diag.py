from load import load_all
from est import *
import sys
data = load_all()
shape = sys.argv[1]; mode = sys.argv[2]
for v in data[shape][0]:
  for i, r in enumerate(data[shape]):
    b = r[v]['batches']; step = r[v]['done']['resolution_ns']
    blocks = [x['samples'] for x in b]; place = [x['place'] for x in b]; n = len(b)
    g = Grid(blocks, step); med = g.med_range(0, n)
    lo, hi = bootstrap_interval(g, n, 2000, np.random.default_rng(17)); se_w = log_half(med, lo, hi) / 1.96
    logs = np.log([grouped_median_1(x, step) for x in blocks])
    f, L = units_fn(logs, True, ACF_MIN, 4)
    by_seg = [np.log(g.med_range(a, bb)) for a, bb in f(n)]
    by_pl = by_placement(place, lambda idx: np.log(g.med_idx(idx)))
    p = combine2(by_pl, by_seg, se_w, mode)
    print(v[:8], i+1, 'boot se %.3f%%' % (se_w*100), 'tp %.3f td %.3f df %.1f half %.3f%%' % (np.sqrt(p['tp'])*100, np.sqrt(p['td'])*100, p['df'], p['half']*100), 'c', p['c'], 'k', p['k'], 'L', L)
