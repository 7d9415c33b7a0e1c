// Signature stub (public API of Android 36 / LiteRT 1.4) for the type check in test-core.sh; never packaged.
package android.os;
public final class PowerManager { public static final int PARTIAL_WAKE_LOCK = 1;
  public WakeLock newWakeLock(int levelAndFlags, String tag) { return null; }
  public final class WakeLock { public void acquire(long timeout) {} public void release() {} public void setReferenceCounted(boolean value) {} } }
