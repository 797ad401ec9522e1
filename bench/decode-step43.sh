#!/usr/bin/env bash
# Step 43 (split-KV decode, d tiles): correctness at odd shapes, timing at decode points against cuDNN,
# and a memcheck. On the GPU machine: BIN=.carry/attnscope OUT=/some/dir bash bench/decode-step43.sh
# (about 4-5 minutes on an H100).
B=${BIN:-.carry/attnscope}
OUT=${OUT:-.}
T=mma+async@16x32s3w4k4d,mma+async@16x64s2w2k2d,mma+async@16x32s3w2k2d,mma+async@32x32s3w4k2d,mma+async@64x32s3w8k2d
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
echo "== correctness (exit 0: every check passed)"
timeout 100 $B sweep --shapes "1,8/2,333,128;2,8/2,100/333,64;1,32/8,16/4100,128;1,32/8,1/4096,128;2,4,77/1000,64" \
  --dtype both --causal both --variants $T --max-seconds 0.5 --telemetry-hz 0 --seed 7 --out $OUT/c.attnscope 2>&1 \
  | grep -vE "^ *(checking|compiling)" > $OUT/c.txt; echo rc=${PIPESTATUS[0]}; tail -70 $OUT/c.txt
echo "== timing"
timeout 150 $B sweep --shapes "8,32/8,1/32768,128;8,32/8,1/16384,128;8,64/8,1/131072,128;8,64/8,16/16384,128;1,32/8,1/4096,128;1,64/8,16/131072,128" \
  --dtype bf16 --causal on --variants cudnn,mma+async@64x64s2w4gq,$T --max-seconds 0.5 --telemetry-hz 0 --seed 7 \
  --out $OUT/t.attnscope 2>&1 | grep -vE "^ *(checking|compiling)" > $OUT/t.txt; echo rc=${PIPESTATUS[0]}; tail -80 $OUT/t.txt
echo "== memcheck"
timeout 40 compute-sanitizer --tool memcheck $B bench --shape 1,32/8,1/4100,128 --causal --dtype bf16 \
  --variants mma+async@16x32s3w4k4d --launches 3 --telemetry-hz 0 2>&1 | tail -8
