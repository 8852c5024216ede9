#!/usr/bin/env bash
# gpu-report.sh: a GPU report in one call, run from the unpacked
# bundle folder on a GPU machine: every GPU test, then every benchmark and
# the builds of the shared scenes on both executors. Writes under $OUT
# (default ./report): tests.txt, bench.md, builds.jsonl, logs.tgz.
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$here/report}
mkdir -p "$out"
cd "$here"
T=${T_TESTS:-240}
timeout "$T" bash run-gpu.sh -test.run "${GPU_TESTS:-GPU}" > "$out/tests.txt" 2>&1
echo "tests exit $?" >> "$out/tests.txt"
(cd logs && tar czf "$out/logs.tgz" .)
k=./kdbuild
{
	for b in copy reduce scan segscan compact sort; do
		echo "## bench $b"
		timeout 90 $k bench $b --sizes ${SIZES:-10,16,20,24,28} --plot "$out/$b.png" -q 2>&1
	done
	echo "## bench thesis"
	timeout 60 $k bench thesis scenes/stanford-bunny.obj 2>&1
} > "$out/bench.md"
: > "$out/builds.jsonl"
for s in scenes/stanford-bunny.obj scenes/sponza-dabrovic.obj.gz scenes/conference.obj.gz scenes/dragon-19k.obj.gz scenes/spot.obj proc:grid:8:8:2:scenes/stanford-bunny.obj; do
	for d in gpu cpu; do
		n=11
		case "$s$d" in *grid*cpu) n=1 ;; esac
		timeout 120 $k "$s" --device $d --bench $n --json -q >> "$out/builds.jsonl" 2>&1 || echo "{\"error\":\"$s $d failed\"}" >> "$out/builds.jsonl"
	done
done
