#!/usr/bin/env bash
# Does a kernel change keep the shipped builds' machine code? Builds every toggle combination at its
# default tile and every tile `t` cycles through, for sm_90 at D 64 and 128 (and 256 where a tile
# takes it), fp16 and bf16, once from the kernel folder at REV (default HEAD) and once from the
# working tree's kernels/, and compares each cubin's .text sections byte for byte (line tables and
# other metadata may differ). NVRTC from PyPI (ATTNSCOPE_PIP_SITE); no GPU.
#   bash scripts/sass_same.sh [REV]
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:-HEAD}
bin=${BIN:-target/release/attnscope}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git archive "$rev" kernels | tar -x -C "$tmp"
mv "$tmp/kernels" "$tmp/old"
tiles=$(python3 - <<'PY'
import tomllib
m = tomllib.load(open("kernels/attention.toml", "rb"))
tiles = [t for lst in m["tiles"] if lst.get("when") == "USE_MMA" for t in lst["cycle"]]
print(",".join(f"mma+async@{t}" for t in tiles))
PY
)
fail=0; same=0
for dtype in fp16 bf16; do
  for d in 64 128 256; do
    for side in old new; do
      dir=kernels; [ $side = old ] && dir="$tmp/old"
      out="$tmp/$side-$dtype-$d"; mkdir -p "$out"
      # One call for the list; variants a configuration does not take fail alone.
      "$bin" build --kernels "$dir" --variants "$tiles" --arch sm_90 --d $d --dtype $dtype --out "$out" >/dev/null 2>&1 || true
      "$bin" build --kernels "$dir" --variants all --arch sm_90 --d $d --dtype $dtype --out "$out" >/dev/null 2>&1 || true
    done
    for f in "$tmp/new-$dtype-$d"/*.cubin; do
      [ -f "$f" ] || continue
      name=$(basename "$f"); old="$tmp/old-$dtype-$d/$name"
      [ -f "$old" ] || { echo "only new: $dtype D$d $name"; fail=1; continue; }
      a=$(readelf -W -S "$f" 2>/dev/null | grep -o ' \.text\.[^ ]*' | sort)
      for sec in $a; do
        if ! cmp -s <(readelf -x "$sec" "$f" 2>/dev/null | tail -n +3) <(readelf -x "$sec" "$old" 2>/dev/null | tail -n +3); then
          echo "DIFFERS: $dtype D$d $name $sec"; fail=1
        fi
      done
      same=$((same + 1))
    done
  done
done
echo "$same cubins compared; $([ $fail = 0 ] && echo 'every .text section identical' || echo 'some differ')"
exit $fail
