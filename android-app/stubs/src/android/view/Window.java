// Signature stub (public API of Android 36 / LiteRT 1.4) for the type check in test-core.sh; never packaged.
package android.view;
public abstract class Window { public void addFlags(int flags) {} public void setSustainedPerformanceMode(boolean enable) {} }
