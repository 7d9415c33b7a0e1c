// Signature stub (public API of Android 36 / LiteRT 1.4) for the type check in test-core.sh; never packaged.
package android.os;
public final class Bundle { public java.util.Set<String> keySet() { return null; } @Deprecated public Object get(String key) { return null; } }
