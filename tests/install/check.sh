#!/usr/bin/env bash
# check.sh BUILD_DIR SOURCE_DIR CMAKE C_COMPILER VERSION: the ctest test install/package.
# Installs the build into a temporary prefix and uses it as a user would:
#   1. the layout: bin/tric, include/tric/ (public headers only), the libraries with their
#      soname links, the CMake package and the pkg-config files;
#   2. tests/install/ as a separate CMake project: find_package(tric), one program against
#      tric::tric (compiles vector_add on cpu), one against tric::runtime (loads the .tir that
#      tric_add_kernels wrote at build time) -- both run and check their results;
#   3. pkg-config --cflags --libs tric / tric-runtime: a program built with them runs;
#   4. tric --emit=c's vector_add launcher, and an autotuned one's, build as strict C11 against the installed headers and
#      link against tric-runtime alone;
#   5. the libraries' dynamic symbols are exactly the functions tric.h declares; libtric_runtime holds no LLVM, needs no
#      libstdc++, and is under 3 MB stripped.
set -euo pipefail
B=$(cd "$1" && pwd); S=$(cd "$2" && pwd); CMAKE=$3; CC=$4; VERSION=$5
T=$(mktemp -d "${TMPDIR:-/tmp}/tric-install.XXXXXX")
trap 'rm -rf "$T"' EXIT
P=$T/prefix
fail() { echo "install check: $*" >&2; exit 1; }

echo "== cmake --install $B --prefix $P"
"$CMAKE" --install "$B" --prefix "$P" >"$T/install.log" || { cat "$T/install.log"; fail "install failed"; }

echo "== layout"
[ -x "$P/bin/tric" ] || fail "bin/tric missing"
# (Outputs are captured before grep reads them: with pipefail, grep -q exiting early could fail
# the writer with SIGPIPE.)
version_line=$("$P/bin/tric" --version)
[[ $version_line == "tric $VERSION "* ]] || fail "bin/tric --version says '$version_line', not $VERSION"
headers=$(cd "$P/include" && find . -type f | sort | tr '\n' ' ')
[ "$headers" = "./tric/tric.h ./tric/version.h " ] || fail "installed headers: $headers (want tric/tric.h tric/version.h)"
config=$(find "$P" -name tricConfig.cmake)
[ -n "$config" ] || fail "no tricConfig.cmake"
libdir=$(dirname "$(dirname "$(dirname "$config")")")
for f in cmake/tric/tricConfigVersion.cmake cmake/tric/tricTargets.cmake cmake/tric/TricKernels.cmake \
         pkgconfig/tric.pc pkgconfig/tric-runtime.pc; do
    [ -f "$libdir/$f" ] || fail "$libdir/$f missing"
done
soversion=${VERSION%.*}
for lib in tric tric_runtime; do
    [ -f "$libdir/lib$lib.so.$VERSION" ] || fail "lib$lib.so.$VERSION missing"
    [ -L "$libdir/lib$lib.so.$soversion" ] && [ -L "$libdir/lib$lib.so" ] || fail "lib$lib.so links missing"
    soname=$(readelf -d "$libdir/lib$lib.so.$VERSION" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
    [ "$soname" = "lib$lib.so.$soversion" ] || fail "lib$lib's soname is '$soname'"
done
echo "   ok: $(cd "$P" && find . \( -type f -o -type l \) | sort | tr '\n' ' ')"

echo "== find_package(tric) from a separate project"
"$CMAKE" -S "$S/tests/install" -B "$T/user" -DCMAKE_PREFIX_PATH="$P" -DCMAKE_C_COMPILER="$CC" \
    -DTRIC_EXAMPLES="$S/examples" -DTRIC_EXPECTED_VERSION="$VERSION" >"$T/user.log" 2>&1 ||
    { cat "$T/user.log"; fail "configuring tests/install failed"; }
"$CMAKE" --build "$T/user" >>"$T/user.log" 2>&1 || { cat "$T/user.log"; fail "building tests/install failed"; }
"$T/user/with_compiler" || fail "with_compiler (tric::tric) failed"
"$T/user/with_runtime" || fail "with_runtime (tric::runtime) failed"
needed=$(readelf -d "$T/user/with_runtime")
[[ $needed == *libtric_runtime* ]] || fail "with_runtime does not use libtric_runtime"

echo "== pkg-config"
command -v pkg-config >/dev/null || fail "pkg-config not found (apt-get install pkg-config; scripts/setup.sh does)"
export PKG_CONFIG_PATH=$libdir/pkgconfig
for pc in tric tric-runtime; do
    flags=$(pkg-config --cflags --libs $pc) || fail "pkg-config $pc failed"
    [ "$(pkg-config --modversion $pc)" = "$VERSION" ] || fail "pkg-config $pc: version is not $VERSION"
    pc_libdir=$(pkg-config --variable=libdir $pc)
    [[ $pc_libdir != *//* && -d $pc_libdir && $pc_libdir -ef $libdir ]] ||
        fail "pkg-config $pc: libdir '$pc_libdir' is not $libdir written plainly"
    # shellcheck disable=SC2086
    "$CC" "$S/tests/install/pkgconfig_check.c" $flags -Wl,-rpath,"$libdir" -o "$T/pc_$pc" ||
        fail "building with pkg-config $pc ($flags) failed"
    "$T/pc_$pc" || fail "the program built with pkg-config $pc failed"
    echo "   ok: pkg-config $pc: $flags"
done

echo "== tric --emit=c against the installed headers and tric-runtime"
# The launcher file the installed tric writes for vector_add, compiled as strict C11 against the
# installed headers only and linked against the runtime-only library through pkg-config; without
# a GPU its load gives the no-device status (the program says which status it got either way).
"$P/bin/tric" "$S/examples/vector_add.tri" --signature='*fp32:16,*fp32:16,*fp32:16,i32:16' \
    -D BLOCK_SIZE=1024 --emit=c -o "$T/va.c" || fail "tric --emit=c failed"
cat >"$T/va_main.c" <<'C'
#include "va.h"
#include <stdio.h>
int main(void)
{
    tric_status st = va_load(NULL);
    printf("va_load: %s\n", tric_status_name(st));
    if (st == TRIC_SUCCESS) {
        va_unload();
        return 0;
    }
    return st == TRIC_ERROR_NO_DEVICE ? 0 : 1;
}
C
# shellcheck disable=SC2046
"$CC" -std=c11 -Wall -Wextra -pedantic -Werror -I"$T" $(PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --cflags tric-runtime) \
    "$T/va_main.c" "$T/va.c" $(PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --libs tric-runtime) \
    -Wl,-rpath,"$libdir" -o "$T/va" || fail "the --emit=c launcher did not build against the installed tric-runtime"
"$T/va" || fail "the --emit=c launcher's load failed with an unexpected status"
needed=$(readelf -d "$T/va")
[[ $needed == *libtric_runtime* && $needed != *"libtric.so"* ]] || fail "the launcher does not link libtric_runtime alone"
echo "   ok: --emit=c vector_add builds with -std=c11 -Wall -Werror against the prefix, links tric-runtime"
# The same for an autotuned kernel's launcher (one over its three configs, with a table baked in).
"$P/bin/tric" "$S/tests/emitc/vector_add_tuned.tri" --emit=c \
    --tuned="$S/tests/emitc/vector_add_tuned.table" -o "$T/vat.c" || fail "tric --emit=c (tuned) failed"
sed 's/va\.h/vat.h/; s/va_load/vat_load/g; s/va_unload/vat_unload/' "$T/va_main.c" >"$T/vat_main.c"
# shellcheck disable=SC2046
"$CC" -std=c11 -Wall -Wextra -pedantic -Werror -I"$T" $(PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --cflags tric-runtime) \
    "$T/vat_main.c" "$T/vat.c" $(PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --libs tric-runtime) \
    -Wl,-rpath,"$libdir" -o "$T/vat" || fail "the tuned --emit=c launcher did not build against the installed tric-runtime"
"$T/vat" || fail "the tuned --emit=c launcher's load failed with an unexpected status"
echo "   ok: --emit=c of an autotuned kernel (--tuned) builds with -std=c11 -pedantic -Werror against the prefix"

echo "== exported symbols"
# Exactly the functions the installed tric.h declares (names followed by '(').
grep -oE '\btric_[a-z0-9_]+\(' "$P/include/tric/tric.h" | tr -d '(' | sort -u >"$T/declared"
for lib in tric tric_runtime; do
    f=$libdir/lib$lib.so.$VERSION
    nm -D --defined-only "$f" | awk '{print $3}' | sort -u >"$T/exported"
    others=$(grep -v '^tric_' "$T/exported" || true)
    [ -z "$others" ] || fail "lib$lib exports more than tric_*: $(echo $others | head -c 400)"
    missing=$(comm -23 "$T/declared" "$T/exported" | tr '\n' ' ')
    [ -z "$missing" ] || fail "lib$lib does not export what tric.h declares: $missing"
    undeclared=$(comm -13 "$T/declared" "$T/exported" | tr '\n' ' ')
    [ -z "$undeclared" ] || fail "lib$lib exports tric_ functions tric.h does not declare: $undeclared"
    echo "   ok: lib$lib exports $(wc -l <"$T/exported") symbols, exactly tric.h's functions"
done

echo "== libtric_runtime: no LLVM, under 3 MB"
rt=$libdir/libtric_runtime.so.$VERSION
llvm_symbols=$(nm "$rt" | grep -ci 'llvm' || true)
[ "$llvm_symbols" = 0 ] || fail "libtric_runtime has $llvm_symbols LLVM symbols"
rt_needed=$(readelf -d "$rt" | sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p' | tr '\n' ' ')
if [[ $rt_needed =~ (LLVM|llvm|stdc\+\+) ]]; then fail "libtric_runtime needs $rt_needed"; fi
strip -o "$T/rt.stripped" "$rt"
size=$(stat -c %s "$T/rt.stripped")
[ "$size" -lt 3145728 ] || fail "libtric_runtime is $size bytes stripped (limit 3 MB)"
echo "   ok: libtric_runtime $size bytes stripped ($(stat -c %s "$rt") with debug info), needs: $rt_needed"
echo "install check: all passed"
