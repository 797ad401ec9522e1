from load import load_all
import numpy as np
data = load_all()
for shape in ['45us','600us']:
  for v in data[shape][0]:
    rows=[]
    for i,r in enumerate(data[shape]):
      d=r[v]; b=d['batches']; c=np.array([x['clk'] for x in b if x['clk']],float)
      rows.append((d['done']['median_ns'], c.mean(), np.median(c), len(b), d['done']['wall_s']))
    a=np.array(rows)
    print(shape, v[:12], 'corr(med, meanclk)=%.2f corr(med,n)=%.2f' % (np.corrcoef(a[:,0],a[:,1])[0,1], np.corrcoef(a[:,0],a[:,3])[0,1]))
    for row in rows: print('   %.1f clk %.0f/%.0f n %d %.2fs' % row)
