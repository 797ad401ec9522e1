import json, subprocess, glob, os, re, pickle
import numpy as np
BASE = '/tmp/est55/data'
SETS = {'6us': ('run168', 'b6'), '45us': ('run168', 'b50'), '600us': ('run167', 'b600')}

def load_session(path):
    raw = subprocess.run(['zstd', '-dc', path], capture_output=True, check=True).stdout.decode()
    out = {}
    for line in raw.splitlines():
        d = json.loads(line); e = d['event']; t = e.get('type')
        if t == 'latency':
            v = out.setdefault(e['variant'], {'batches': [], 'done': None})
            v['batches'].append(dict(t_us=d['t_us'], samples=np.array(e['samples_ns'], dtype=np.int64),
                                     clk=e.get('sm_clock_mhz'), thr=e.get('throttled'),
                                     place=e.get('placement') or 0, busy=e.get('busy')))
        elif t == 'measurement_done':
            out.setdefault(e['variant'], {'batches': [], 'done': None})['done'] = e
    return out

def load_all():
    cache = '/tmp/est55/sessions.pkl'
    if os.path.exists(cache):
        return pickle.load(open(cache, 'rb'))
    data = {}
    for shape, (run, pre) in SETS.items():
        files = sorted(glob.glob(f'{BASE}/{run}/sessions/{pre}-*.jsonl.zst'), key=lambda p: int(re.findall(r'-(\d+)\.jsonl', p)[0]))
        data[shape] = [load_session(f) for f in files]
    pickle.dump(data, open(cache, 'wb'))
    return data

if __name__ == '__main__':
    data = load_all()
    for shape, runs in data.items():
        for i, r in enumerate(runs):
            for v, d in r.items():
                b = d['batches']; done = d['done']
                clk = [x['clk'] for x in b if x['clk']]
                thr = sum(1 for x in b if x['thr'])
                print(shape, i+1, v[:20], len(b), 'n/batch', len(b[0]['samples']), 'dur %.2fs' % ((b[-1]['t_us']-b[0]['t_us'])/1e6),
                      'clk', min(clk), max(clk), len(clk), 'thr', thr, 'med %.1f' % done['median_ns'], done['stop_reason'], done['placements'],
                      'ci %.3f%%' % ((done['ci_high_ns']-done['ci_low_ns'])/2/done['median_ns']*100), 'run %.3f%%' % ((done['reruns']['run_high']-done['reruns']['run_low'])/2/done['median_ns']*100))
