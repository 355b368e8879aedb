#!/usr/bin/env bash
# Coverage-guided fuzzing of the core with AFL++ (cargo afl, stable Rust), then the random
# plain-SQL sequences on both backends and the two-tenant property, for a set time. Findings are left in
# target/fuzz/<target>/default/crashes; turn each into a corpus file (fuzz/corpus/<target>/)
# so that `make test` replays it from then on.
#
# Usage: scripts/fuzz.sh   (FUZZ_SECONDS per target, default 300; FUZZ_TARGETS to pick)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-300}
targets=${FUZZ_TARGETS:-"query tokenizer answer options"}
export CARGO_TARGET_DIR=target/afl

if ! cargo afl --version >/dev/null 2>&1; then
  echo "fuzz: installing cargo-afl (about a minute, once)"
  cargo install --locked cargo-afl
fi
cargo afl config --build >/dev/null 2>&1 || true   # builds AFL++ once; a no-op afterwards
cargo afl build --release -p agentmem-fuzz --features afl

report=target/fuzz/report.md
mkdir -p target/fuzz
{
  echo "| target | seconds | executions | corpus | crashes | hangs |"
  echo "|---|---|---|---|---|---|"
} > "$report"
found=0
for t in $targets; do
  out=target/fuzz/$t
  rm -rf "$out"
  echo "fuzz: $t for ${seconds}s"
  AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_UI=1 \
    cargo afl fuzz -i "fuzz/corpus/$t" -o "$out" -V "$seconds" "target/afl/release/fuzz_$t" \
    > "$out.log" 2>&1 || true
  stats=$out/default/fuzzer_stats
  execs=$(awk -F' *: *' '/^execs_done/ {print $2}' "$stats" 2>/dev/null || echo 0)
  corpus=$(awk -F' *: *' '/^corpus_count/ {print $2}' "$stats" 2>/dev/null || echo 0)
  crashes=$(find "$out/default/crashes" -type f ! -name README.txt 2>/dev/null | wc -l)
  hangs=$(find "$out/default/hangs" -type f 2>/dev/null | wc -l)
  echo "| $t | $seconds | $execs | $corpus | $crashes | $hangs |" >> "$report"
  found=$((found + crashes + hangs))
done

echo "fuzz: random plain-SQL sequences for ${seconds}s per backend"
trap 'scripts/pg-cluster.sh stop' EXIT
scripts/pg-cluster.sh start
unset CARGO_TARGET_DIR
AGENTMEM_PG="host=127.0.0.1 port=$(cat "${PG_DIR:-/tmp/agentmem-test-pg}/port") user=postgres dbname=agentmem_test" \
AGENTMEM_PG_REQUIRED=1 FUZZ_SECONDS=$seconds \
  cargo test -p agentmem-tests --test fuzz_sql -- --nocapture 2>&1 | grep -E "fuzz_sql|test result|panicked" | tee -a target/fuzz/sql.log

# The two-tenant property (tests/tests/tenant_property.rs) at a new seed, about as long.
seed=$(date +%s)
echo "fuzz: two tenants, seed $seed, $((seconds * 4)) steps"
AGENTMEM_PG="host=127.0.0.1 port=$(cat "${PG_DIR:-/tmp/agentmem-test-pg}/port") user=postgres dbname=agentmem_test" \
AGENTMEM_PG_REQUIRED=1 AGENTMEM_TENANT_SEED=$seed AGENTMEM_TENANT_STEPS=$((seconds * 4)) \
  cargo test -p agentmem-tests --test tenant_property -- --nocapture 2>&1 \
  | grep -E "tenant property|test result|panicked|seed" | tee -a target/fuzz/tenants.log

cat "$report"
if [ "$found" -gt 0 ]; then
  echo "fuzz: $found finding(s) in target/fuzz/*/default/{crashes,hangs}"
  exit 1
fi
echo "fuzz: no findings"
