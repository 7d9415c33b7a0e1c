#!/usr/bin/env bash
# Compile and test the app's pure-Kotlin core on this JVM (no Android SDK needed), then write the
# fixtures the Python tests compare against (tests/android/).
#
#   bash android-app/test-core.sh [--out DIR] [--fixtures-only]
#
# --fixtures-only skips JUnit and the manifest check (tests/android uses it to get the fixtures).
#
# Installs what it needs on a fresh machine, idempotently: the Kotlin compiler from npm
# (kotlin-compiler, into $NNLITE_ANDROID_TOOLS, default ~/.cache/nnlite-android-tools) and JUnit 5
# from Debian (junit5); aapt2 + framework-res (Debian: aapt, android-framework-res) for the
# manifest check. Recompiles only when a source changed. Exits non-zero on any failure.
set -euo pipefail

KOTLIN_VERSION=2.4.20
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT="$HERE/build/core-out"
FIXTURES_ONLY=0
while [ $# -gt 0 ]; do
    case "$1" in
        --out) OUT="$2"; shift 2 ;;
        --fixtures-only) FIXTURES_ONLY=1; shift ;;
        *) echo "usage: $0 [--out DIR] [--fixtures-only]" >&2; exit 2 ;;
    esac
done
TOOLS="${NNLITE_ANDROID_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/nnlite-android-tools}"
BUILD="$HERE/build/core-jvm"
JUNIT_JAR=/usr/share/java/junit-platform-console-standalone.jar
FRAMEWORK_RES=/usr/share/android-framework-res/framework-res.apk

say() { echo "test-core: $*"; }

apt_install() {
    # Debian's lists may be absent on a fresh machine: update once, only when an install fails.
    if [ "$(id -u)" != 0 ]; then say "need root to apt-get install $*"; return 1; fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >/dev/null 2>&1 \
        || { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >/dev/null; }
}

command -v java >/dev/null || { say "java not found (Java 17 expected)"; exit 1; }

KOTLIN_HOME="$TOOLS/node_modules/kotlin-compiler"
if [ ! -x "$KOTLIN_HOME/bin/kotlinc" ] || ! grep -q "\"version\": \"$KOTLIN_VERSION\"" "$KOTLIN_HOME/package.json"; then
    say "installing kotlin-compiler@$KOTLIN_VERSION from npm into $TOOLS"
    mkdir -p "$TOOLS"
    npm install --prefix "$TOOLS" --no-audit --no-fund --silent "kotlin-compiler@$KOTLIN_VERSION" >/dev/null
fi
[ -f "$JUNIT_JAR" ] || { say "installing junit5 (Debian)"; apt_install junit5; }
STDLIB="$KOTLIN_HOME/lib/kotlin-stdlib.jar"
for f in "$KOTLIN_HOME/bin/kotlinc" "$STDLIB" "$JUNIT_JAR"; do
    [ -e "$f" ] || { say "missing $f"; exit 1; }
done

# Compile (core, its tests, and the app's sources against API stubs) unless no source changed.
SRC_MAIN="$HERE/core/src/main/kotlin"
SRC_TEST="$HERE/core/src/test/kotlin"
SRC_APP="$HERE/app/src/main/kotlin"
STUBS="$HERE/stubs/src"
STAMP="$(cat "$0" <(find "$SRC_MAIN" "$SRC_TEST" "$SRC_APP" "$STUBS" -type f | LC_ALL=C sort | xargs cat) \
    | sha256sum | cut -c1-16)"
if [ "$(cat "$BUILD/stamp" 2>/dev/null)" != "$STAMP" ]; then
    say "compiling core with kotlinc $KOTLIN_VERSION"
    rm -rf "$BUILD" && mkdir -p "$BUILD"
    KOTLINC=("$KOTLIN_HOME/bin/kotlinc" -jvm-target 17 -Werror -nowarn)
    "${KOTLINC[@]}" -d "$BUILD/core.jar" $(find "$SRC_MAIN" -name '*.kt')
    "${KOTLINC[@]}" -cp "$BUILD/core.jar:$JUNIT_JAR" -d "$BUILD/core-tests.jar" $(find "$SRC_TEST" -name '*.kt')
    # The Android side cannot be built here; type-check it against stubs of the APIs it calls
    # (Java stubs for Android and LiteRT, Kotlin stubs for ExecuTorch, whose Android API is Kotlin).
    javac -nowarn -d "$BUILD/stubs" $(find "$STUBS" -name '*.java')
    "${KOTLINC[@]}" -d "$BUILD/stubs-kt.jar" $(find "$STUBS" -name '*.kt')
    "${KOTLINC[@]}" -cp "$BUILD/stubs:$BUILD/stubs-kt.jar:$BUILD/core.jar" -d "$BUILD/app-typecheck.jar" $(find "$SRC_APP" -name '*.kt')
    say "app sources type-check against the API stubs (stubs/)"
    echo "$STAMP" >"$BUILD/stamp"
else
    say "core unchanged since the last build ($STAMP), not recompiling"
fi
CP="$BUILD/core.jar:$BUILD/core-tests.jar:$STDLIB"

# Guard the separation the design rests on: the core must not touch Android or LiteRT.
if grep -rnE '^import (android|androidx|org\.tensorflow|com\.google\.ai)\.' "$SRC_MAIN"; then
    say "the core imports Android/LiteRT classes (above); it must stay plain Kotlin"; exit 1
fi

if [ "$FIXTURES_ONLY" = 1 ]; then
    exec java -cp "$CP" org.nnlite.bench.core.ProtocolFixturesKt \
        --samples "$HERE/protocol/fixtures/sample-timings.json" --out "$OUT"
fi

rm -rf "$BUILD/junit-reports"
set +e
java -jar "$JUNIT_JAR" --disable-banner --details=tree --class-path "$CP" \
    --scan-classpath "$BUILD/core-tests.jar" --disable-ansi-colors --reports-dir "$BUILD/junit-reports" 2>&1 | tee "$BUILD/junit.log"
JUNIT_RC=${PIPESTATUS[0]}
set -e
count() { grep -oE "\[ *[0-9]+ tests $1" "$BUILD/junit.log" | grep -oE '[0-9]+' | tail -1; }
PASSED="$(count successful)"; FAILED="$(count failed)"
if [ -z "$PASSED" ] || [ "$PASSED" = 0 ]; then say "JUnit ran no test"; JUNIT_RC=1; fi

java -cp "$CP" org.nnlite.bench.core.ProtocolFixturesKt \
    --samples "$HERE/protocol/fixtures/sample-timings.json" --out "$OUT"

# The manifest must link against the real framework resources (catches attribute typos).
MANIFEST_RC=0
if ! command -v aapt2 >/dev/null || [ ! -f "$FRAMEWORK_RES" ]; then
    say "installing aapt + android-framework-res (Debian) for the manifest check"
    apt_install aapt android-framework-res || MANIFEST_RC=1
fi
if [ "$MANIFEST_RC" = 0 ]; then
    # Gradle supplies the package from `namespace`; aapt2 alone needs it in the file.
    sed 's|<manifest |<manifest package="org.nnlite.bench" |' "$HERE/app/src/main/AndroidManifest.xml" \
        >"$BUILD/AndroidManifest.xml"
    if aapt2 link --manifest "$BUILD/AndroidManifest.xml" -I "$FRAMEWORK_RES" \
        --min-sdk-version 26 --target-sdk-version 29 \
        --version-code 1 --version-name 0.1.0 -o "$BUILD/manifest-check.apk" 2>"$BUILD/aapt2.log"; then
        say "manifest links against framework-res (aapt2)"
    else
        cat "$BUILD/aapt2.log"; say "manifest check failed"; MANIFEST_RC=1
    fi
fi

echo "core: ${PASSED:-0} passed, ${FAILED:-0} failed"
[ "$JUNIT_RC" = 0 ] && [ "$MANIFEST_RC" = 0 ]
