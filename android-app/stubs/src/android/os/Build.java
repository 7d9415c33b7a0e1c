// Signature stub (public API of Android 36 / LiteRT 1.4) for the type check in test-core.sh; never packaged.
package android.os;
public class Build {
  public static final String MANUFACTURER = "", MODEL = "", BRAND = "", DEVICE = "", PRODUCT = "", BOARD = "", HARDWARE = "";
  public static final String SOC_MANUFACTURER = "", SOC_MODEL = "", ID = "", FINGERPRINT = "";
  public static final String[] SUPPORTED_ABIS = {};
  public static class VERSION { public static final int SDK_INT = 0; public static final String RELEASE = ""; }
  public static class VERSION_CODES { public static final int N = 24; public static final int O = 26; public static final int O_MR1 = 27;
    public static final int Q = 29; public static final int R = 30; public static final int S = 31; }
}
