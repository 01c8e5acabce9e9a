#!/bin/sh
# layering.sh SRC [CHECK]: the layering rules of docs/architecture.md ("Principles"), one per ctest:
#   codegen_no_passes (the default; ctest layering/codegen_no_passes): codegen/ includes no header
#     of passes/ and calls no function that passes/passes.h declares, nor one of ir/layout.c's
#     rules that choose scratch and staging (ir.h lists them between the lines "the rules that
#     choose scratch and staging (begin)" and "(end)"): what the passes decide is in the IR
#     (layouts, scratch records), and codegen uses only the address arithmetic of ir/layout.c.
#   runtime_no_frontend (ctest layering/runtime_no_frontend): runtime/ includes no header of
#     frontend/ and calls no function that frontend/frontend.h declares: what the runtime asks of a
#     source (its kernels, autotune configs, heuristics at launch) goes through driver/entry.c.
#   compiler_no_environment (ctest layering/compiler_no_environment): frontend/, ir/, passes/ and
#     codegen/ call neither getenv nor secure_getenv: a switch that changes code is an option,
#     read from the environment only at the edges (tools/, runtime/, driver/) and part of every
#     cache key. Nor do they name getenv or Python's os.environ at all (code, strings or
#     comments): which host Python calls read a kernel file's host values is the driver's to say
#     (driver_host_env), and the values are SpecOptions.host_env's.
# Prints every violation as FILE:LINE: what, and fails when there is one.
#
# The names come from the header itself (ir.h: between the markers), so a function added there is
# covered. Comments are stripped first (line numbers kept), and calls are looked for outside string
# and character literals: comments and strings may name the other layer and its functions.
set -eu
cd "$1"
check=${2:-codegen_no_passes}

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

# Every identifier that FILE follows with "(" outside comments: its functions (a function
# pointer's type, "(*PassFn)(", and "bool (" do not match), less the X-macro tables' X.
functions_in() {
    strip_comments "$1" | grep -oE '[A-Za-z_][A-Za-z0-9_]*\(' | sed 's/($//' | grep -vx 'X' |
        sort -u
}

# layer_check LAYER OTHER HEADER ADVICE [NAMES]: LAYER/*.c and *.h include no header of OTHER/
# (none named: no such rule) and call no function that HEADER declares (or of NAMES, when given:
# the functions of a part of HEADER).
layer_check() {
    layer=$1 other=$2 header=$3 advice=$4
    names=${5:-$(functions_in "$header")}
    if [ -z "$names" ]; then
        echo "layering.sh: found no function in $header" >&2
        exit 1
    fi
    calls=$(echo "$names" | tr '\n' '|' | sed 's/|$//')
    bad=0
    for f in "$layer"/*.c "$layer"/*.h; do
        out=$(strip_comments "$f" | awk -v file="$f" -v calls="$calls" -v other="$other" -v header="$header" '
            # the line with the text of its string and character literals dropped (the quotes
            # kept): a name in a string is not a call ("os.getenv(" in Python a file holds)
            function code_only(s,   out, i, c, q) {
                out = ""; q = ""
                for (i = 1; i <= length(s); i++) {
                    c = substr(s, i, 1)
                    if (q != "") {
                        if (c == "\\") { i++; continue }
                        if (c != q) continue
                        q = ""
                    } else if (c == "\"" || c == "\047") {
                        q = c
                    }
                    out = out c
                }
                return out
            }
            other != "" && $0 ~ "^[ \t]*#[ \t]*include[ \t]*[\"<]([^\">]*/)?" other "/" {
                printf "%s:%d: includes a header of %s/: %s\n", file, NR, other, $0
            }
            {
                line = code_only($0)
                while (match(line, "(^|[^A-Za-z0-9_])(" calls ")[ \t]*\\(")) {
                    hit = substr(line, RSTART, RLENGTH)
                    sub(/^[^A-Za-z_]/, "", hit)
                    sub(/[ \t]*\($/, "", hit)
                    printf "%s:%d: calls %s, declared in %s\n", file, NR, hit, header
                    line = substr(line, RSTART + RLENGTH)
                }
            }')
        if [ -n "$out" ]; then
            echo "$out"
            bad=1
        fi
    done
    if [ "$bad" -ne 0 ]; then
        echo "$layer/ must not depend on ${other:-$header}: $advice" >&2
        exit 1
    fi
    if [ -n "$other" ]; then
        echo "$layer/ includes no header of $other/ and calls none of its $(echo "$names" | wc -l) functions"
    else
        echo "$layer/ calls none of the $(echo "$names" | wc -l) functions of $header"
    fi
}

case $check in
codegen_no_passes)
    layer_check codegen passes passes/passes.h \
        "a rule both need belongs in ir/ (ir/layout.c)"
    sed -n '/the rules that choose scratch and staging (begin)/,/the rules that choose scratch and staging (end)/p' \
        ir/ir.h > "${TMPDIR:-/tmp}/layering.$$"
    choosers=$(functions_in "${TMPDIR:-/tmp}/layering.$$")
    rm -f "${TMPDIR:-/tmp}/layering.$$"
    if [ -z "$choosers" ]; then
        echo "layering.sh: found no rule between the scratch markers of ir/ir.h" >&2
        exit 1
    fi
    layer_check codegen "" "ir/ir.h's rules that choose scratch and staging" \
        "the passes choose, and codegen reads the choice off the op (docs/ir.md \"Scratch records\")" \
        "$choosers" ;;
runtime_no_frontend)
    layer_check runtime frontend frontend/frontend.h \
        "ask the driver (driver/entry.c, declared in driver/driver.h)" ;;
compiler_no_environment)
    for layer in frontend ir passes codegen; do
        layer_check "$layer" "" "the C library's environment" \
            "make it an option, read at the edges (tools/, runtime/, driver/) and in the cache key" \
            "$(printf 'getenv\nsecure_getenv')"
    done
    named=$(grep -rnE 'getenv|os\.environ' frontend ir passes codegen || true)
    if [ -n "$named" ]; then
        echo "$named"
        echo "frontend/, ir/, passes/ and codegen/ must not name the environment's readers: the" \
            "driver names the host Python calls that read host values (driver_host_env)" >&2
        exit 1
    fi
    echo "frontend/, ir/, passes/ and codegen/ name neither getenv nor os.environ" ;;
*)
    echo "layering.sh: unknown check '$check' (codegen_no_passes, runtime_no_frontend," \
        "compiler_no_environment)" >&2
    exit 2 ;;
esac
