from load import load_all
import numpy as np
data = load_all()
def med(s): return np.median(s)
for shape in ['45us','600us','6us']:
  for i in [0,1]:
    r = data[shape][i]
    for v,d in r.items():
      b = d['batches']
      m = np.array([med(x['samples']) for x in b]); t = np.array([x['t_us'] for x in b])/1e6; t-=t[0]
      lm = np.log(m); lm -= lm.mean()
      print(shape, i, v[:12], 'n', len(m), 'sd %.4f' % lm.std(), 'dt %.4f' % np.median(np.diff(t)))
      ac = [np.corrcoef(lm[:-k], lm[k:])[0,1] for k in range(1, min(40, len(m)//3))]
      print('  acf', ' '.join('%.2f' % a for a in ac))
      if shape!='6us' and i==0:
        for j,x in enumerate(b):
          if j%2==0 or x['clk']: print('   %5.2f %+.4f clk=%s thr=%s pl=%s busy=%.3f' % (t[j], lm[j], x['clk'], x['thr'], x['place'], x['busy'] or -1))
