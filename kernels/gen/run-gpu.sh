#!/usr/bin/env bash
# run-gpu.sh: runs every test binary of this bundle (made by make gpu-bundle)
# and prints per package PASS or FAIL with the number of tests passed and
# skipped (a GPU test skips when no GPU works). Each binary runs in
# work/<package>/, so paths relative to the package folder work, and
# work/../shared/scenes points at the bundled scenes. Arguments are passed
# to every binary (e.g. -test.run GPU, -test.bench Copy); -test.v is added
# (its output goes to the log only) so that passes and skips can be counted,
# and -test.timeout=9m unless given.
# Logs: logs/<package>.log. Exit status 1 when any package fails.
set -u
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$here/logs" "$here/shared"
# make gpu-bundle ships the binaries gzipped; unpack them once.
for z in "$here"/*.test.gz "$here"/kdbuild.gz; do
	[ -e "$z" ] && gzip -df "$z" && chmod +x "${z%.gz}"
done
[ -e "$here/shared/scenes" ] || ln -s ../scenes "$here/shared/scenes"
args=("$@")
has_v=0
has_timeout=0
for a in "$@"; do
	case "$a" in
	-test.v*) has_v=1 ;;
	-test.timeout*) has_timeout=1 ;;
	esac
done
[ $has_v -eq 0 ] && args+=(-test.v)
[ $has_timeout -eq 0 ] && args+=(-test.timeout=9m)
echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
[ -x "$here/kdbuild" ] && "$here/kdbuild" devices 2>&1 | sed 's/^/  /'
fails=0
while read -r name rel; do
	dir="$here/work/$rel"
	mkdir -p "$dir"
	log="$here/logs/$name.log"
	start=$(date +%s%N)
	(cd "$dir" && "$here/$name.test" "${args[@]}") > "$log" 2>&1
	rc=$?
	ms=$((($(date +%s%N) - start) / 1000000))
	npass=$(grep -c -- '--- PASS' "$log")
	nskip=$(grep -c -- '--- SKIP' "$log")
	if [ $rc -eq 0 ]; then
		printf 'PASS  %-16s %4d.%01ds  %3d passed, %3d skipped\n' "$rel" $((ms / 1000)) $((ms % 1000 / 100)) "$npass" "$nskip"
	else
		fails=$((fails + 1))
		printf 'FAIL  %-16s %4d.%01ds  exit %d\n' "$rel" $((ms / 1000)) $((ms % 1000 / 100)) "$rc"
		# Each failed test's line and the messages logged under it, and panics.
		# (go test -v prints a test's messages before its --- line.)
		awk '/^=== (RUN|CONT|PAUSE|NAME)/ {buf = ""; next}
			/^ *--- FAIL/ {printf "%s", buf; print; buf = ""; next}
			/^ *--- (PASS|SKIP)/ {buf = ""; next}
			{buf = buf $0 "\n"}
			END {if (buf ~ /panic:|timed out/) printf "%s", buf}' "$log" | head -40 | sed 's/^/      /'
	fi
done < "$here/packages.txt"
echo "$fails package(s) failed; logs in $here/logs/"
[ $fails -eq 0 ]
