from load import load_all
from est import *
data = load_all()
for shape in ['45us','600us']:
  for v in data[shape][0]:
    print(shape, v[:12])
    for i, r in enumerate(data[shape]):
      b = r[v]['batches']; step = r[v]['done']['resolution_ns']
      blocks = [x['samples'] for x in b]; g = Grid(blocks, step); n = len(b)
      logs = batch_log_medians(blocks, step); L = cycle_lag(logs)
      med = g.med_range(0, n)
      if L is None: print('   none'); continue
      k = n // L
      u = [np.log(g.med_range(s*n//k, (s+1)*n//k)/med)*100 for s in range(k)]
      u6 = [np.log(g.med_range(a, bb)/med)*100 for a, bb in segments(n)]
      print('   L=%d cyc: %s | 6seg: %s' % (L, ' '.join('%+.2f' % x for x in u), ' '.join('%+.2f' % x for x in u6)))
