from load import load_all
from est import *
data = load_all()
for shape, runs in data.items():
    for i, r in enumerate(runs):
        for v, d in r.items():
            b = d['batches']; done = d['done']
            blocks = [x['samples'] for x in b]; place = [x['place'] for x in b]
            step = done['resolution_ns']
            med, lo, hi, p = current_final(blocks, place, step)
            rr = done['reruns']
            print(shape, i + 1, v[:10], 'med %.1f vs %.1f' % (med, done['median_ns']),
                  'half %.3f%% vs %.3f%%' % (log_half(med, lo, hi) * 100, log_half(done['median_ns'], rr['run_low'], rr['run_high']) * 100),
                  'tp %.3f td %.3f c %d k %d df %.1f' % (np.sqrt(p['tp']) * 100, np.sqrt(p['td']) * 100, p['c'], p['k'], p['df']))
