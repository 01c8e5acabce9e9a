#!/bin/sh
# layering.sh SRC: codegen/ includes no header of passes/ and calls no function that
# passes/passes.h declares (docs/architecture.md, "Principles"): what the passes decide is in the
# IR, and the rules both read off layouts are ir/layout.c's. Prints every violation as
# FILE:LINE: what, and fails when there is one (the ctest test layering/codegen_no_passes).
#
# The names come from passes.h itself, so a function added there is covered. Comments are
# stripped first (line numbers kept): codegen's comments may name the passes and their functions.
set -eu
cd "$1"

# Prints FILE with every /* ... */ comment blanked, one output line per input line.
strip_comments() {
    awk '{
        line = $0; out = ""
        while (line != "") {
            if (in_comment) {
                i = index(line, "*/")
                if (i == 0) { line = ""; break }
                line = substr(line, i + 2); in_comment = 0
            } else {
                i = index(line, "/*")
                if (i == 0) { out = out line; break }
                out = out substr(line, 1, i - 1); line = substr(line, i + 2); in_comment = 1
            }
        }
        print out
    }' "$1"
}

# Every identifier that passes.h follows with "(" outside comments: its functions (a function
# pointer's type, "(*PassFn)(", and "bool (" do not match).
names=$(strip_comments passes/passes.h | grep -oE '[A-Za-z_][A-Za-z0-9_]*\(' | sed 's/($//' |
        sort -u)
if [ -z "$names" ]; then
    echo "layering.sh: found no function in passes/passes.h" >&2
    exit 1
fi
calls=$(echo "$names" | tr '\n' '|' | sed 's/|$//')

bad=0
for f in codegen/*.c codegen/*.h; do
    out=$(strip_comments "$f" | awk -v file="$f" -v calls="$calls" '
        /^[ \t]*#[ \t]*include[ \t]*["<]([^">]*\/)?passes\// {
            printf "%s:%d: includes a header of passes/: %s\n", file, NR, $0
        }
        {
            line = $0
            while (match(line, "(^|[^A-Za-z0-9_])(" calls ")[ \t]*\\(")) {
                hit = substr(line, RSTART, RLENGTH)
                sub(/^[^A-Za-z_]/, "", hit)
                sub(/[ \t]*\($/, "", hit)
                printf "%s:%d: calls %s, declared in passes/passes.h\n", file, NR, hit
                line = substr(line, RSTART + RLENGTH)
            }
        }')
    if [ -n "$out" ]; then
        echo "$out"
        bad=1
    fi
done
if [ "$bad" -ne 0 ]; then
    echo "codegen/ must not depend on passes/: a rule both need belongs in ir/ (ir/layout.c)" >&2
    exit 1
fi
echo "codegen/ includes no header of passes/ and calls none of its $(echo "$names" | wc -l) functions"
