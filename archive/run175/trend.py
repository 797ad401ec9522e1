from load import load_all
import numpy as np
data = load_all()
for shape in ['45us','600us']:
  for v in data[shape][0]:
    print(shape, v[:12])
    for i,r in enumerate(data[shape]):
      b=r[v]['batches']; t=np.array([x['t_us'] for x in b])/1e6; t-=t[0]
      lm=np.log([np.median(x['samples']) for x in b])
      # medians per 0.5 s window
      w=[np.median(lm[(t>=a)&(t<a+0.5)]) for a in np.arange(0,t[-1],0.5)]
      print('   ', ' '.join('%+.2f'%((x-w[-1])*100) for x in w))
