// Signature stub (public API of Android 36 / LiteRT 1.4) for the type check in test-core.sh; never packaged.
package android.content;
public class Intent { public static final String ACTION_BATTERY_CHANGED = "android.intent.action.BATTERY_CHANGED";
  public android.os.Bundle getExtras() { return null; } public int getIntExtra(String name, int defaultValue) { return defaultValue; } }
