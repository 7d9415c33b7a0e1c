// Signature stub (public API of Android 36 / LiteRT 1.4) for the type check in test-core.sh; never packaged.
package android.app;
public class KeyguardManager { public boolean isKeyguardLocked() { return false; }
  public void requestDismissKeyguard(Activity activity, KeyguardDismissCallback callback) {}
  public abstract static class KeyguardDismissCallback {} }
