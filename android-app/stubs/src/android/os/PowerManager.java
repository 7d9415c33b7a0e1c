// Signature stub (public API of Android 36 / LiteRT 1.4) for the type check in test-core.sh; never packaged.
package android.os;
public final class PowerManager { public static final int PARTIAL_WAKE_LOCK = 1;
  public static final int THERMAL_STATUS_NONE = 0, THERMAL_STATUS_LIGHT = 1, THERMAL_STATUS_MODERATE = 2, THERMAL_STATUS_SEVERE = 3,
    THERMAL_STATUS_CRITICAL = 4, THERMAL_STATUS_EMERGENCY = 5, THERMAL_STATUS_SHUTDOWN = 6;
  public WakeLock newWakeLock(int levelAndFlags, String tag) { return null; }
  public int getCurrentThermalStatus() { return 0; } public float getThermalHeadroom(int forecastSeconds) { return 0f; }
  public boolean isPowerSaveMode() { return false; } public boolean isInteractive() { return false; }
  public boolean isSustainedPerformanceModeSupported() { return false; }
  public final class WakeLock { public void acquire(long timeout) {} public void release() {} public void setReferenceCounted(boolean value) {} } }
