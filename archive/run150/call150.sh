set -u
B=.carry/attnscope; K=.carry/k-fused; D=mma+async@16x32s3w4k4d,mma+async@16x64s2w2k2d,mma+async@16x32s3w2k2d,mma+async@32x32s3w4k2d,mma+async@64x32s3w8k2d
export PYTHONUNBUFFERED=1
DSTEP_KERNELS="fused fusedp" DSTEP_CHECKS=0 DSTEP_SHAPES="1,32/8,1/4096,128 1,64/8,1/4096,128 1,32/8,1/16384,128 1,64/8,1/16384,128 1,32/8,1/131072,128 1,64/8,1/131072,128 1,32/8,16/16384,128 8,64/8,16/131072,128" python3 scripts/campaign.py run bench/campaigns/fast.toml --only dstep --id run150 --out $OUT --budget-s 200
DSTEP_KERNELS="fused" DSTEP_CHECKS=0 DSTEP_SHAPES="8,64/8,1/4096,128 8,32/8,1/131072,128" python3 scripts/campaign.py run bench/campaigns/fast.toml --only dstep --id run151 --out $OUT --budget-s 100
C=$OUT/run150/fused-checks; mkdir -p $C
echo "== selftest --kernels k-fused (d tiles)"; timeout 150 $B selftest --kernels $K --variants $D > $C/selftest.txt 2>&1; echo "rc=$? $(tail -1 $C/selftest.txt)"; grep -E "FAIL|ERROR" $C/selftest.txt | head -8
export PATH="/usr/local/cuda/bin:$PATH"
echo "== memcheck"; timeout 60 compute-sanitizer --tool memcheck $B bench --kernels $K --shape 1,64/8,1/4100,128 --causal --dtype bf16 --variants mma+async@16x32s3w4k4d,mma+async@16x32s3w2k2d,mma+async@32x32s3w4k2d --launches 3 --telemetry-hz 0 > $C/memcheck.txt 2>&1; tail -1 $C/memcheck.txt
for t in racecheck synccheck; do timeout 40 compute-sanitizer --tool $t $B bench --kernels $K --shape 2,8/2,1/777,128 --causal --dtype bf16 --variants mma+async@16x32s3w4k4d --launches 2 --telemetry-hz 0 > $C/$t.txt 2>&1; echo "$t: $(grep -E 'SUMMARY' $C/$t.txt | tail -1)"; done
echo "== mutations --kernels k-fused"; timeout 170 $B selftest --mutations --kernels $K > $C/mutations.txt 2>&1; echo "rc=$? $(tail -1 $C/mutations.txt)"
