// Signature stub (public API of Android 36 / LiteRT 1.4) for the type check in test-core.sh; never packaged.
package android.util;
public final class Log { public static int i(String t, String m) { return 0; } public static int w(String t, String m) { return 0; }
  public static int e(String t, String m) { return 0; } public static int e(String t, String m, Throwable tr) { return 0; } }
