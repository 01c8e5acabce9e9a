#!/bin/sh
# cc_strict.sh CC INCLUDE_DIR GENERATED_INCLUDE_DIR DIR FILE.c...: compiles each generated FILE.c
# (in DIR, beside its header) alone with CC -std=c11 -Wall -Wextra -pedantic -Werror and nothing
# but tric.h's directories (the source's and the build's, which holds the generated
# tric/version.h) on the include path, as a user's build would (the ctest test emitc/cc-strict).
set -e
cc=$1 include=$2 gen_include=$3 dir=$4
shift 4
for f in "$@"; do
    "$cc" -std=c11 -Wall -Wextra -pedantic -Werror -I"$include" -I"$gen_include" -c "$dir/$f" -o "$dir/${f%.c}.strict.o"
    echo "$f: compiles as strict C11"
done
