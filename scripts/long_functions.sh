#!/bin/sh
# long_functions.sh [SRC [MIN]]: lists every C function of MIN (150) lines or more in tric's
# source folders as "FILE:LINE NAME LINES", FILE relative to SRC (default: the repository this
# script is in), LINE the first line of its definition, LINES from there to its closing brace.
# STYLE.md asks for small functions; tests/long_functions.sh (ctest style/long_functions) fails
# on any this lists that tests/long_functions.allow does not name.
#
# The source folders are support/ frontend/ ir/ passes/ codegen/ driver/ runtime/ tools/; tests/
# and bench/ are not held to it, and flex's and bison's outputs (lexer.c, parser.c) live in the
# build tree. The rule it reads the code by (clang-format keeps it true, .clang-format): outside a
# function a line that starts at column 0 with a letter starts a declaration; a declaration whose
# text up to its "{" has a "(" and no "=" is a function definition (a struct, union or enum has
# no "(" before its "{", an initializer has its "="); its body ends at the next "}" at column 0.
# One-line functions are not counted. On fde873b it finds every function Universal Ctags finds
# (`ctags --c-kinds=f --fields=+ne`), with the same first and last lines.
set -eu
src=${1:-$(dirname "$0")/..}
min=${2:-150}
cd "$src"

find support frontend ir passes codegen driver runtime tools -type f \( -name '*.c' -o -name '*.h' \) \
        ! -name lexer.c ! -name parser.c 2>/dev/null | LC_ALL=C sort |
while read -r f; do
    awk -v file="$f" -v min="$min" '
        # In a body: the first "}" at column 0 closes it.
        in_body {
            if ($0 ~ /^}/) {
                n = NR - start + 1
                if (n >= min) printf "%s:%d %s %d\n", file, start, name, n
                in_body = 0
            }
            next
        }
        # Outside: a declaration starts at column 0 with a letter (or "_").
        /^[A-Za-z_]/ { start = NR; decl = "" }
        /^[ \t]*$/ { start = 0 }                                 # a signature has no blank line
        start {
            decl = decl " " $0
            if ($0 ~ /;[ \t]*$/ || $0 ~ /}[ \t]*$/) { start = 0; next }  # a prototype, a one-liner
            if ($0 ~ /\{[ \t]*$/) {
                if (decl ~ /\(/ && decl !~ /=/ && decl !~ /^ *typedef[ \t]/) {
                    head = decl
                    sub(/\(.*/, "", head)                        # up to the first "("
                    sub(/[ \t*]+$/, "", head)
                    name = head
                    sub(/.*[^A-Za-z0-9_]/, "", name)             # its last identifier
                    in_body = 1
                } else {
                    start = 0                                    # an aggregate
                }
            }
        }
    ' "$f"
done
