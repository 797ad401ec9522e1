#!/usr/bin/env bash
# Builds the release binary and copies it to .carry/ (which .git/info/exclude ignores) for the GPU
# machine, with .carry/BUILD naming the commit it was built from (and "dirty" when the tree had
# uncommitted changes), which a campaign's manifest records.
#   bash scripts/carry.sh && python3 scripts/campaign.py run bench/campaigns/headline.toml  (on the GPU machine)
set -euo pipefail
cd "$(dirname "$0")/.."
grep -qx '/.carry/' .git/info/exclude 2>/dev/null || echo '/.carry/' >> .git/info/exclude
cargo build --release --quiet
mkdir -p .carry
cp target/release/attnscope .carry/attnscope
dirty=$(git status --porcelain --untracked-files=no | grep -q . && echo dirty || true)
echo "$(git rev-parse HEAD) $dirty" > .carry/BUILD
echo ".carry/attnscope ($(du -h .carry/attnscope | cut -f1)) from $(cat .carry/BUILD)"
