// Signature stub (public API of Android 36 / LiteRT 1.4) for the type check in test-core.sh; never packaged.
package android.os;
public class BatteryManager { public static final String EXTRA_TEMPERATURE = "temperature"; }
