#!/bin/sh
# long_functions.sh SRC: no function of 150 lines or more in the source folders (STYLE.md "Small
# functions"), except those tests/long_functions.allow names while someone splits them. Fails
# (the ctest test style/long_functions) when scripts/long_functions.sh lists a function the
# allowlist does not name, when an allowlisted function is gone or now shorter than 150 lines
# (take it off the list: the list only shrinks), or when an entry has no "# who splits it" comment.
set -eu
cd "$1"
allow=tests/long_functions.allow
found=$(sh scripts/long_functions.sh . 150)

# "FILE NAME" per entry, comments and blank lines dropped; an entry must carry its comment.
bad=0
entries=$(grep -vE '^[ \t]*(#|$)' "$allow" || true)
nocomment=$(echo "$entries" | grep -v '#' || true)
if [ -n "$nocomment" ]; then
    echo "$allow: an entry needs a comment naming the issue or owner that splits it:"
    echo "$nocomment" | sed 's/^/    /'
    bad=1
fi
allowed=$(echo "$entries" | sed 's/#.*//; s/[ \t]*$//' | awk 'NF == 2 { print $1 " " $2 }')

# found: "FILE:LINE NAME LINES" -> "FILE NAME" to compare with the allowlist.
unlisted=$(echo "$found" | while read -r at name lines; do
    [ -n "$at" ] || continue
    key="${at%%:*} $name"
    if ! echo "$allowed" | grep -qxF "$key"; then
        echo "$at: $name is $lines lines; split it into the steps it is (or allowlist it in $allow)"
    fi
done)
if [ -n "$unlisted" ]; then
    echo "$unlisted"
    bad=1
fi

stale=$(echo "$allowed" | while read -r file name; do
    [ -n "$file" ] || continue
    if ! echo "$found" | awk '{ sub(/:.*/, "", $1); print $1 " " $2 }' | grep -qxF "$file $name"; then
        echo "$allow: $file $name is gone or under 150 lines now: take it off the list"
    fi
done)
if [ -n "$stale" ]; then
    echo "$stale"
    bad=1
fi

if [ "$bad" -ne 0 ]; then
    exit 1
fi
echo "no function of 150+ lines outside $allow ($(echo "$allowed" | grep -c . || true) listed)"
