// Signature stub (public API of Android 36 / LiteRT 1.4) for the type check in test-core.sh; never packaged.
package android.content;
public abstract class Context { public static final String POWER_SERVICE = "power"; public abstract Object getSystemService(String name); }
