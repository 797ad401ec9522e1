B=.carry/attnscope
V=mma+async@64x64s2w8k2,mma+async@64x64s2w8k2c2,mma+async@64x64s2w8k2c4,mma+async@64x128s2w4c2,mma+async@64x64s2w4c2,mma+async@64x64s2w4c4,mma+async@64x32s2w8k2c2
p50() { python3 -c "import json,sys; d=json.load(sys.stdin); print(' '.join(f\"{r['variant']}={r.get('p50_us', float('nan')):.2f}\" + ('' if r.get('correct') else '(WRONG)') + (' ERR '+r['error'][:200] if 'error' in r else '') for r in d['results']))" | tr ' ' '\n' | sed 's/^/  /'; }
for shape in "1,3,333,64 --causal" "1,2,77,64 --causal" "1,2,77,64" "2,8,512,64" "2,8,512,64 --causal" "4,16,4096,64"; do
  echo "== $shape"; $B bench --shape $shape --variants $V,mma+async@128x64s2w4,mma+async@128x64s2w4c2 --max-seconds 1 --telemetry-hz 0 --json 2>/tmp/e.txt | p50; grep -i "error\|fail" /tmp/e.txt | head -3
done
export PATH=/usr/local/cuda/bin:$PATH
for v in mma+async@64x64s2w8k2c2 mma+async@64x64s2w4c4; do for s in "1,3,333,64 --causal" "2,8,512,64"; do
compute-sanitizer --tool memcheck --error-exitcode 9 $B bench --shape $s --variants $v --launches 2 --timer events --telemetry-hz 0 2>&1 | grep -E "ERROR SUMMARY|Invalid|FAIL" | head -3
compute-sanitizer --tool racecheck --error-exitcode 9 $B bench --shape $s --variants $v --launches 2 --timer events --telemetry-hz 0 2>&1 | grep -E "RACECHECK SUMMARY" | head -2
done; done
