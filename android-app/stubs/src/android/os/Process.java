// Signature stub (public API of Android 36 / LiteRT 1.4) for the type check in test-core.sh; never packaged.
package android.os;
public class Process { public static final int THREAD_PRIORITY_FOREGROUND = -2; public static final void setThreadPriority(int priority) {}
  public static final int myPid() { return 0; } }
