#!/usr/bin/env bash
# sass-diff.sh OLD.fatbin NEW.fatbin: compares the SASS of every kernel (and
# device function) of two kernel images, architecture by architecture, with
# cuobjdump -sass: prints the functions whose code differs or that only one
# image has, then a count. The order of functions in the images does not
# matter. Exit status 1 when any differs. For example, against the image of
# the last commit:
#
#	git show HEAD:kernels/kdbuild.fatbin > /tmp/old.fatbin
#	bash kernels/gen/sass-diff.sh /tmp/old.fatbin kernels/kdbuild.fatbin
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 OLD.fatbin NEW.fatbin" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
split_sass() { # fatbin dir: one file per architecture and function
	mkdir -p "$2"
	cuobjdump -sass "$1" | awk -v dir="$2" '
		/^[ \t]*arch = / { arch = $3; if (f) close(f); f = ""; next }
		/^[ \t]*Function : / { if (f) close(f); f = dir "/" arch "." $3; next }
		/^Fatbin/ { if (f) close(f); f = ""; next }
		f { sub(/^[ \t]+/, ""); print > f }'
}
split_sass "$1" "$tmp/old" &
split_sass "$2" "$tmp/new"
wait
n=$(ls "$tmp/old" | wc -l)
if diff -rq "$tmp/old" "$tmp/new" | sed "s|$tmp/||g"; then
	echo "sass-diff: all $n functions (architecture, name) identical"
else
	echo "sass-diff: differences above, of $n functions in $1"
	exit 1
fi
