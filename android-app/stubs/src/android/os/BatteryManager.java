// Signature stub (public API of Android 36) for the type check in test-core.sh; never packaged.
// Values as android.os.BatteryManager (the BATTERY_STATUS_/HEALTH_ ones come from android.hardware.health.V1_0.Constants).
package android.os;
public class BatteryManager {
  public static final String EXTRA_STATUS = "status";
  public static final String EXTRA_HEALTH = "health";
  public static final String EXTRA_PRESENT = "present";
  public static final String EXTRA_LEVEL = "level";
  public static final String EXTRA_BATTERY_LOW = "battery_low";
  public static final String EXTRA_SCALE = "scale";
  public static final String EXTRA_ICON_SMALL = "icon-small";
  public static final String EXTRA_PLUGGED = "plugged";
  public static final String EXTRA_VOLTAGE = "voltage";
  public static final String EXTRA_TEMPERATURE = "temperature";
  public static final String EXTRA_TECHNOLOGY = "technology";
  public static final String EXTRA_CYCLE_COUNT = "android.os.extra.CYCLE_COUNT";
  public static final String EXTRA_CHARGING_STATUS = "android.os.extra.CHARGING_STATUS";
  public static final int BATTERY_STATUS_UNKNOWN = 1;
  public static final int BATTERY_STATUS_CHARGING = 2;
  public static final int BATTERY_STATUS_DISCHARGING = 3;
  public static final int BATTERY_STATUS_NOT_CHARGING = 4;
  public static final int BATTERY_STATUS_FULL = 5;
  public static final int BATTERY_HEALTH_UNKNOWN = 1;
  public static final int BATTERY_HEALTH_GOOD = 2;
  public static final int BATTERY_HEALTH_OVERHEAT = 3;
  public static final int BATTERY_HEALTH_DEAD = 4;
  public static final int BATTERY_HEALTH_OVER_VOLTAGE = 5;
  public static final int BATTERY_HEALTH_UNSPECIFIED_FAILURE = 6;
  public static final int BATTERY_HEALTH_COLD = 7;
  public static final int BATTERY_PLUGGED_AC = 1;
  public static final int BATTERY_PLUGGED_USB = 2;
  public static final int BATTERY_PLUGGED_WIRELESS = 4;
  public static final int BATTERY_PLUGGED_DOCK = 8;
  public static final String ACTION_CHARGING = "android.os.action.CHARGING";
  public static final String ACTION_DISCHARGING = "android.os.action.DISCHARGING";
  public static final int BATTERY_PROPERTY_CHARGE_COUNTER = 1;
  public static final int BATTERY_PROPERTY_CURRENT_NOW = 2;
  public static final int BATTERY_PROPERTY_CURRENT_AVERAGE = 3;
  public static final int BATTERY_PROPERTY_CAPACITY = 4;
  public static final int BATTERY_PROPERTY_ENERGY_COUNTER = 5;
  public static final int BATTERY_PROPERTY_STATUS = 6;
  public boolean isCharging() { return false; }
  public int getIntProperty(int id) { return 0; }
  public long getLongProperty(int id) { return 0L; }
  public long computeChargeTimeRemaining() { return 0L; }
}
