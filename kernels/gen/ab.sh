#!/usr/bin/env bash
# ab.sh: same-run comparisons of kdbuild binaries, run from the unpacked
# bundle folder on a GPU machine (make gpu-bundle, with BASE=<revision> for
# a kdbuild_base to compare with). Settings, from the environment:
#   BINS    the binaries (default: kdbuild, and kdbuild_base when the bundle
#           has it); environment settings may follow a binary's name after
#           '+': "kdbuild kdbuild+KDBUILD_GPU_OFF=pipeline"
#   SCENES  scene files or procedural scenes (default: the bunny and
#           conference of scenes/)
#   REPS    rounds (default 2): each round runs every binary on every scene
#           in turn, so that the machine's drifts hit them all alike
#   N       builds per run, --bench (default 21; 3 for proc: scenes)
#   NCU=1   then Nsight Compute kernel durations of one build per binary and
#           scene: the total and the 12 longest kernels
#   DEVICE  --device (default gpu)
# One line per run: binary, scene, build ms (median), on-device ms, SAH
# cost, nodes, references, device bytes per triangle and the phases.
set -u
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
for z in kdbuild*.gz; do [ -e "$z" ] && gzip -df "$z" && chmod +x "${z%.gz}"; done
BINS=${BINS:-kdbuild$([ -x kdbuild_base ] && echo " kdbuild_base")}
SCENES=${SCENES:-"scenes/stanford-bunny.obj scenes/conference.obj.gz"}
REPS=${REPS:-2}
DEVICE=${DEVICE:-gpu}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# run VAR: the binary and environment of a BINS entry.
split() {
	IFS=+ read -r -a parts <<< "$1"
	bin=./${parts[0]}
	envs=("${parts[@]:1}")
}
for r in $(seq "$REPS"); do
	for s in $SCENES; do
		for v in $BINS; do
			split "$v"
			n=${N:-21}
			case "$s" in proc:*) n=${N:-3} ;; esac
			if ! env "${envs[@]}" "$bin" "$s" --device "$DEVICE" --bench "$n" --json -q > "$tmp/out.json" 2> "$tmp/err.txt"; then
				echo "$v $s FAILED: $(tail -2 "$tmp/err.txt")"
				continue
			fi
			python3 - "$v" "$s" "$tmp/out.json" <<'PY'
import json, sys
v, s, f = sys.argv[1:4]
d = json.load(open(f))
b, t = d['build'], d['tree']
ph = ' '.join('%s=%.2f' % (k, x) for k, x in sorted(b.get('phases', {}).items()))
name = 'grid' if s.startswith('proc:') else s.split('/')[-1][:14]
bpt = d['memory']['device_peak_bytes'] / max(1, d['scene']['triangles'])
print('%-28s %-14s ms=%.2f dms=%.2f sah=%.2f nodes=%d refs=%d bpt=%.0f %s' % (
    v, name, b['ms'], b.get('device_ms', b['ms']), t['sah_cost'], t['nodes'], t['references'], bpt, ph))
PY
		done
	done
done
[ "${NCU:-0}" = 1 ] || exit 0
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for s in $SCENES; do
	for v in $BINS; do
		split "$v"
		echo "== kernels: $v $s"
		env "${envs[@]}" "$ncu" --cache-control none --clock-control none --csv --metrics gpu__time_duration.sum \
			"$bin" "$s" --device "$DEVICE" -q > "$tmp/ncu.csv" 2> "$tmp/ncu.err" || { tail -3 "$tmp/ncu.err"; continue; }
		python3 - "$tmp/ncu.csv" <<'PY'
import collections, csv, sys
rows = list(csv.reader(open(sys.argv[1])))
hdr = [i for i, r in enumerate(rows) if 'Kernel Name' in r]
if not hdr:
    sys.exit('no kernels profiled')
h = rows[hdr[0]]
ki, vi, ui = h.index('Kernel Name'), h.index('Metric Value'), h.index('Metric Unit')
scale = {'ns': 1e-3, 'nsecond': 1e-3, 'us': 1.0, 'usecond': 1.0, 'ms': 1e3, 'msecond': 1e3}
agg = collections.defaultdict(lambda: [0, 0.0])
for r in rows[hdr[0] + 1:]:
    if len(r) <= vi:
        continue
    us = float(r[vi].replace(',', '')) * scale.get(r[ui], 1.0)
    k = r[ki].split('(')[0]
    agg[k][0] += 1
    agg[k][1] += us
total = sum(a[1] for a in agg.values())
print('total %.1f us in %d launches' % (total, sum(a[0] for a in agg.values())))
for k, (c, t) in sorted(agg.items(), key=lambda x: -x[1][1])[:12]:
    print('  %-34s %4d launches %9.1f us %8.2f us each' % (k, c, t, t / c))
PY
	done
done
