// Signature stub (public API of Android 36 / LiteRT 1.4) for the type check in test-core.sh; never packaged.
package android.os;
public final class Debug { public static long getNativeHeapSize() { return 0; } public static long getNativeHeapAllocatedSize() { return 0; } }
