// Signature stub (public API of Android 36 / LiteRT 1.4) for the type check in test-core.sh; never packaged.
package android.content;
public abstract class Context { public static final String POWER_SERVICE = "power"; public static final String BATTERY_SERVICE = "batterymanager"; public static final String KEYGUARD_SERVICE = "keyguard";
  public abstract Object getSystemService(String name);
  public java.io.File getExternalFilesDir(String type) { return null; }
  public Intent registerReceiver(BroadcastReceiver receiver, IntentFilter filter) { return null; } }
