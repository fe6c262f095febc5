#!/usr/bin/env bash
# The PostgreSQL store's benchmark (docs/benchmarks.md, "PostgreSQL store"):
#   bash benches/pg.sh [WORK_DIR]
# On a throwaway local cluster (.ci/pg-cluster): `candor ingest` of the 200,000-case file
# of `cargo bench --bench ingest` into SQLite and into PostgreSQL, alternated, wall and
# peak RSS by /usr/bin/time; then 16 concurrent ingests of distinct 20,000-case files (their
# first upload, every name new, then their next run, every name known) and
# a check that every run is stored exactly once; then `cargo bench --bench reliability`
# with `--pg`: `reliability --write`, `tests --failing` and `show TEST` over 50,000 tests
# × 200 runs (10M executions) in both stores. SKIP_RELIABILITY=1 leaves that part out.
# PG_CLUSTER=DIR uses (and starts if needed) the cluster in DIR and keeps it, so that the
# 10M-execution history, which takes minutes to build, is built once: with the same
# WORK_DIR the SQLite one is kept too (`--keep-in`).
# Every cargo command here runs with the caller's environment (the CARGO_PROFILE_* the
# project's working rules name, to reuse a prebuilt target/).
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-$(mktemp -d "${TMPDIR:-/tmp}/candor-pgbench.XXXXXX")}
mkdir -p "$work"
rounds=${ROUNDS:-3}

cargo build --release --quiet --bin candor
# CANDOR_BIN=PATH measures another build (an earlier release, for a before/after).
bin=${CANDOR_BIN:-$PWD/target/release/candor}
file=$work/junit-bench.xml
if [ ! -f "$file" ]; then
  cargo bench --quiet --bench ingest -- --keep-in "$work" --iterations 1 --quick-junit off >/dev/null
fi

if [ -n "${PG_CLUSTER:-}" ]; then
  cluster=$PG_CLUSTER
  mkdir -p "$cluster"
  url=$(.ci/pg-cluster start "$cluster")
  trap '.ci/pg-cluster stop "$cluster" || true' EXIT
else
  cluster=$(mktemp -d /tmp/cpgbench.XXXXXX)
  url=$(.ci/pg-cluster start "$cluster")
  trap '.ci/pg-cluster stop "$cluster" || true; rm -rf "$cluster"' EXIT
fi
psql_() { psql -X -q -v ON_ERROR_STOP=1 "host=$cluster user=candor dbname=postgres" "$@"; }

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| round | store | wall (s) | peak RSS (MiB) |"
echo "| --: | --- | --: | --: |"
for round in $(seq "$rounds"); do
  rm -f "$work/bench.db"
  /usr/bin/time -f "%e %M" -o "$work/t" "$bin" --quiet --db "$work/bench.db" ingest "$file" >/dev/null
  read -r wall kib <"$work/t"
  echo "| $round | SQLite | $wall | $((kib / 1024)) |"
  psql_ -c "DROP SCHEMA public CASCADE; CREATE SCHEMA public;"
  /usr/bin/time -f "%e %M" -o "$work/t" "$bin" --quiet --db "$url" ingest "$file" >/dev/null
  read -r wall kib <"$work/t"
  echo "| $round | PostgreSQL | $wall | $((kib / 1024)) |"
done

# 16 distinct 20,000-case files: the first 20,000 cases, their class names made distinct.
psql_ -c "DROP SCHEMA public CASCADE; CREATE SCHEMA public;"
small=$work/small.xml
python3 - "$file" "$small" <<'PY'
import sys
text = open(sys.argv[1]).read()
# Cut before the 20,001st case and close the suite it was in.
at = -1
for _ in range(20001):
    at = text.index("<testcase", at + 1)
open(sys.argv[2], "w").write(text[:at] + "</testsuite>\n</testsuites>\n")
PY
for i in $(seq 16); do sed "s/classname=\"/classname=\"shard$i./g" "$small" >"$work/shard$i.xml"; done
"$bin" --quiet --db "$url" ingest "$work/shard1.xml" >/dev/null   # schema and partition exist
# Schema 5 adds the name deltas (test_name_delta), schema 4 keeps names in test_names and
# test_name_index, schema 3 in tests: every name goes, so the first upload's are all new.
psql_ -c "DO \$\$ BEGIN IF to_regclass('test_name_delta') IS NOT NULL THEN TRUNCATE runs, test_names, test_name_index, test_name_delta, execution_blocks; ELSIF to_regclass('tests') IS NULL THEN TRUNCATE runs, test_names, test_name_index, execution_blocks; ELSE TRUNCATE runs, tests, execution_blocks; END IF; END \$\$"
# Two rounds of 16 at once: the shards' first upload (every name new to the history),
# then the same shards' next run (new files, every name known: a CI fleet's
# every day after its first).
# (A comment after the document makes each next file's bytes, so its content key, new.)
for i in $(seq 16); do { cat "$work/shard$i.xml"; echo "<!-- the next run -->"; } >"$work/next$i.xml"; done
for round in "shard:names new" "next:names known"; do
  prefix=${round%%:*}
  echo "load average before the concurrent ingests ($prefix): $(cut -d' ' -f1-3 /proc/loadavg)"
  before=$(psql_ -At -c "SELECT count(*) FROM runs")
  start=$(date +%s.%N)
  pids=()
  for i in $(seq 16); do
    "$bin" --quiet --db "$url" ingest "$work/$prefix$i.xml" >/dev/null & pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid"; done
  end=$(date +%s.%N)
  runs=$(psql_ -At -c "SELECT count(*) FROM runs")
  # Executions stored: the half bytes that are not 0 in every block's outcomes.
  executions=$(psql_ -At -c "SELECT count(*) FROM execution_blocks b, generate_series(0, 2 * length(b.outcomes) - 1) s WHERE (get_byte(b.outcomes, s / 2) >> (s % 2 * 4)) & 15 <> 0")
  dups=$(psql_ -At -c "SELECT count(*) FROM (SELECT content_key FROM runs GROUP BY 1 HAVING count(*) > 1) d")
  added=$((runs - before))
  echo "16 concurrent ingests, ${round#*:}: $added runs added ($runs in all), $executions executions in all, $dups duplicated, $(python3 -c "print(f'{$end - $start:.2f}')") s wall, $(python3 -c "print(f'{$added * 20000 / ($end - $start):,.0f}')") executions/s"
done

if [ -z "${SKIP_RELIABILITY:-}" ]; then
  echo "load average before the 10M-execution history: $(cut -d' ' -f1-3 /proc/loadavg)"
  mkdir -p "$work/reliability"
  cargo bench --quiet --bench reliability -- --tests 50000 --runs 200 --iterations 3 \
    --keep-in "$work/reliability" --pg "$url"
fi
