from load import load_all
from est import *
data = load_all()
for shape in ['45us','600us','6us']:
    runs = data[shape]
    for v in runs[0]:
        print(shape, v)
        for r in runs:
            b = r[v]['batches']; step = r[v]['done']['resolution_ns']
            blocks=[x['samples'] for x in b]; place=[x['place'] for x in b]
            med, lo, hi, p = current_final(blocks, place, step)
            g=Grid(blocks,step)
            lo2,hi2=bootstrap_interval(g,len(blocks),500,np.random.default_rng(1))
            sew=log_half(med,lo2,hi2)/1.96
            logs=np.log([grouped_median_1(x,step) for x in blocks])
            L=cycle_lag(logs)
            print(f"  n={len(blocks)} med={med:.1f} se_w={sew*100:.3f}% tp_sd={np.sqrt(p['tp'])*100:.3f}% td_sd={np.sqrt(p['td'])*100:.3f}% df={p['df']:.1f} c={p['c']} k={p['k']} half={p['half']*100:.3f}% L={L} places={sorted(set(place))}")
