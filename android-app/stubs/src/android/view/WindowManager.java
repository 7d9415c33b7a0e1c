// Signature stub (public API of Android 36 / LiteRT 1.4) for the type check in test-core.sh; never packaged.
package android.view;
public interface WindowManager { class LayoutParams { public static final int FLAG_KEEP_SCREEN_ON = 0x80;
  public static final int FLAG_SHOW_WHEN_LOCKED = 0x00080000; public static final int FLAG_TURN_SCREEN_ON = 0x00200000; } }
