#!/usr/bin/env bash
# scripts/format.sh [--check]: formats every tracked C source and header with clang-format and the
# repository's .clang-format files (runtime/ has its own: function braces attached). The X-macro
# tables stay one entry per line between /* clang-format off */ and /* clang-format on */.
# --check lists the files that are not formatted and exits 1 if there are any (nothing is changed).
# Needs clang-format (Debian: apt-get install clang-format).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "format.sh: clang-format not found (apt-get install clang-format)" >&2; exit 2; }
mapfile -t files < <(git ls-files '*.c' '*.h')
if [ "${1:-}" = --check ]; then
    bad=0
    for f in "${files[@]}"; do
        if ! clang-format "$f" | cmp -s - "$f"; then
            echo "$f"
            bad=1
        fi
    done
    exit $bad
fi
clang-format -i "${files[@]}"
