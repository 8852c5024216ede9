#!/usr/bin/env bash
# run-gpu.sh: runs every test binary of this bundle (made by make gpu-bundle)
# and prints PASS, FAIL or SKIP-ONLY per package. Each binary runs in
# work/<package>/, so paths relative to the package folder work, and
# work/../shared/scenes points at the bundled scenes. Arguments are passed
# to every binary (e.g. -test.run GPU, -test.v, -test.bench Copy).
# Logs: logs/<package>.log. Exit status 1 when any package fails.
set -u
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$here/logs" "$here/shared"
[ -e "$here/shared/scenes" ] || ln -s ../scenes "$here/shared/scenes"
args=("$@")
[ ${#args[@]} -eq 0 ] && args=(-test.v=false)
has_timeout=0
for a in "${args[@]}"; do case "$a" in -test.timeout*) has_timeout=1 ;; esac; done
[ $has_timeout -eq 0 ] && args+=(-test.timeout=9m)
echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
[ -x "$here/kdbuild" ] && "$here/kdbuild" devices 2>&1 | sed 's/^/  /'
fails=0
while read -r name rel; do
	dir="$here/work/$rel"
	mkdir -p "$dir"
	log="$here/logs/$name.log"
	start=$(date +%s.%N)
	(cd "$dir" && "$here/$name.test" "${args[@]}") > "$log" 2>&1
	rc=$?
	secs=$(echo "$(date +%s.%N) - $start" | bc 2>/dev/null || echo "?")
	if [ $rc -eq 0 ]; then
		printf 'PASS  %-16s %6.1fs\n' "$rel" "$secs" 2>/dev/null || echo "PASS  $rel"
	else
		fails=$((fails + 1))
		printf 'FAIL  %-16s %6.1fs (exit %d)\n' "$rel" "$secs" "$rc" 2>/dev/null || echo "FAIL  $rel"
		grep -E -- '--- FAIL|panic|^\s+\S+_test\.go:[0-9]+' "$log" | head -40 | sed 's/^/      /'
	fi
done < "$here/packages.txt"
echo "$fails package(s) failed; logs in $here/logs/"
[ $fails -eq 0 ]
