#!/usr/bin/env bash
# bundle.sh (make gpu-bundle): builds, into $BUNDLE, a folder that a GPU
# machine without Go can run: one test binary per package that has tests,
# kdbuild itself (binaries gzipped), the kernel sources (for the image staleness test), the
# scenes named in $SCENES (copied from ../shared/scenes), run-gpu.sh and ab.sh.
#   PKGS: only these packages' test binaries (folders relative to the module
#         root, e.g. "kdtree split cmd/kdbuild"; empty: every package): a
#         bundle small enough to travel with the working tree.
#   BASE: a git revision; its kdbuild is built too, as kdbuild_base, for
#         same-run comparisons (ab.sh).
# Run from the module root. A package whose test binary does not build is
# reported and the others are still built; the exit status is then 1.
set -u
GO=${GO:-go}
BUNDLE=${BUNDLE:-bundle}
SCENES=${SCENES:-}
PKGS=${PKGS:-}
BASE=${BASE:-}
export CGO_ENABLED=1

# wanted REL: whether the package folder REL is to be bundled.
wanted() {
	[ -z "$PKGS" ] && return 0
	for p in $PKGS; do
		[ "${p%/}" = "$1" ] && return 0
	done
	return 1
}

rm -rf "$BUNDLE"
mkdir -p "$BUNDLE/work" "$BUNDLE/scenes"
module=$($GO list -m)
: > "$BUNDLE/packages.txt"
failed=()
# Every package with test files, in go list order.
for pkg in $($GO list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' ./... 2>/dev/null); do
	rel=${pkg#"$module"}
	rel=${rel#/}
	[ -z "$rel" ] && rel=.
	name=$(echo "$rel" | tr / -)
	[ "$rel" = . ] && name=root
	wanted "$rel" || continue
	if $GO test -c -ldflags="-s -w" -o "$BUNDLE/$name.test" "./$rel"; then
		echo "$name $rel" >> "$BUNDLE/packages.txt"
		# Files the tests read relative to their package folder.
		mkdir -p "$BUNDLE/work/$rel"
		[ -d "$rel/testdata" ] && cp -r "$rel/testdata" "$BUNDLE/work/$rel/"
	else
		echo "gpu-bundle: test binary of $rel does not build" >&2
		failed+=("$rel")
	fi
done
# The kernel sources, which tests of several packages read (../kernels).
mkdir -p "$BUNDLE/work/kernels"
cp kernels/*.cu kernels/*.cuh "$BUNDLE/work/kernels/"
if ! $GO build -ldflags='-s -w' -o "$BUNDLE/kdbuild" ./cmd/kdbuild; then
	echo "gpu-bundle: kdbuild does not build" >&2
	failed+=("kdbuild binary")
fi
if [ -n "$BASE" ]; then
	# kdbuild of another revision, built in a temporary worktree.
	wt=$(mktemp -d)
	out=$(cd "$BUNDLE" && pwd)/kdbuild_base
	if git worktree add -q --detach "$wt" "$BASE" &&
		(cd "$wt" && $GO build -ldflags='-s -w' -o "$out" ./cmd/kdbuild); then
		echo "gpu-bundle: kdbuild_base is $(git rev-parse --short "$BASE")"
	else
		echo "gpu-bundle: kdbuild of $BASE does not build" >&2
		failed+=("kdbuild of $BASE")
	fi
	git worktree remove --force "$wt" 2>/dev/null
	rm -rf "$wt"
fi
for s in $SCENES; do
	if [ -f "../shared/scenes/$s" ]; then
		cp "../shared/scenes/$s" "$BUNDLE/scenes/" && chmod u+w "$BUNDLE/scenes/$s"
	else
		echo "gpu-bundle: ../shared/scenes/$s not found, skipped" >&2
	fi
done
[ -f ../shared/scenes/conference-copyright.txt ] && cp ../shared/scenes/conference-copyright.txt "$BUNDLE/scenes/" && chmod u+w "$BUNDLE/scenes/conference-copyright.txt"
cp kernels/gen/run-gpu.sh "$BUNDLE/run-gpu.sh"
cp kernels/gen/gpu-report.sh "$BUNDLE/gpu-report.sh"
cp kernels/gen/ab.sh "$BUNDLE/ab.sh"
chmod +x "$BUNDLE/run-gpu.sh" "$BUNDLE/ab.sh"
# The binaries travel gzipped (about a third of the size); run-gpu.sh
# unpacks them on first use.
raw=$(du -sh "$BUNDLE" | cut -f1)
gzip -9 "$BUNDLE"/*.test "$BUNDLE"/kdbuild* 2>/dev/null
echo "gpu-bundle: $(wc -l < "$BUNDLE/packages.txt") test binaries, $(du -sh "$BUNDLE" | cut -f1) in $BUNDLE/ ($raw unpacked)"
if [ ${#failed[@]} -gt 0 ]; then
	echo "gpu-bundle: failed: ${failed[*]}" >&2
	exit 1
fi
