#!/bin/sh
# Copies the shared result corpus into fuzz/corpus/<target>/ (git-ignored) as seeds.
# Corpus location: $CANDOR_CORPUS, else ../shared/corpus/results next to the repository,
# else /work/shared/corpus/results.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
corpus=${CANDOR_CORPUS:-}
if [ -z "$corpus" ]; then
    if [ -d "$here/../../shared/corpus/results" ]; then
        corpus="$here/../../shared/corpus/results"
    else
        corpus=/work/shared/corpus/results
    fi
fi
[ -d "$corpus/junit" ] || { echo "no corpus at $corpus (set CANDOR_CORPUS)" >&2; exit 2; }
seed() {
    target=$1
    shift
    mkdir -p "$here/corpus/$target"
    for dir in "$@"; do
        cp "$corpus/$dir"/* "$here/corpus/$target/"
    done
}
seed junit junit
seed libtest_json libtest-json
seed go_test_json go-test-json
seed detect_parse junit libtest-json go-test-json other
for target in junit libtest_json go_test_json detect_parse; do
    echo "$target: $(ls "$here/corpus/$target" | wc -l) seed files"
done
