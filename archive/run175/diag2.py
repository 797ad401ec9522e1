from load import load_all
from est import *
import sys
data = load_all()
for shape in sys.argv[1:]:
 for v in data[shape][0]:
  for i, r in enumerate(data[shape]):
    b = r[v]['batches']; step = r[v]['done']['resolution_ns']
    blocks = [x['samples'] for x in b]; place = [x['place'] for x in b]; n = len(b)
    g = Grid(blocks, step); med = g.med_range(0, n)
    logs = np.log([grouped_median_1(x, step) for x in blocks])
    L = cycle_lag(logs)
    lo, hi = bootstrap_interval(g, n, 1000, np.random.default_rng(17)); se_iid = log_half(med, lo, hi) / 1.96
    se_st = float('nan'); k = 0; tdp = tdl = float('nan')
    if L and n // L >= 2:
        lo, hi = stratified_bootstrap(g, strata_of(n, L), 1000, np.random.default_rng(17)); se_st = log_half(med, lo, hi) / 1.96
        k = n // L; u = [np.log(g.med_range(s*n//k, (s+1)*n//k)) for s in range(k)]
        tdp = np.sqrt(unit_var(u, 'plain')[0] / k)
        if k >= 3: tdl = np.sqrt(unit_var(u, 'linear')[0] / k)
    by_pl = by_placement(place, lambda idx: np.log(g.med_idx(idx)))
    tp = np.sqrt(mean_var(by_pl)[1] / len(by_pl))
    print(shape, v[:8], i+1, 'n', n, 'L', L, 'k', k, 'se_iid %.3f se_strat %.3f tp %.3f | cyc sd/√k plain %.3f lin %.3f' % (se_iid*100, se_st*100, tp*100, tdp*100, tdl*100))
