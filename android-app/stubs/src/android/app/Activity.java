// Signature stub (public API of Android 36 / LiteRT 1.4) for the type check in test-core.sh; never packaged.
package android.app;
public class Activity extends android.content.Context {
  protected void onCreate(android.os.Bundle savedInstanceState) {}
  protected void onNewIntent(android.content.Intent intent) {}
  protected void onResume() {}
  protected void onPause() {}
  public android.view.Window getWindow() { return null; }
  public void setContentView(android.view.View view) {}
  public android.content.Intent getIntent() { return null; }
  @Override public Object getSystemService(String name) { return null; }
  public final void runOnUiThread(Runnable action) {}
  public void finishAndRemoveTask() {}
  public void setShowWhenLocked(boolean showWhenLocked) {}
  public void setTurnScreenOn(boolean turnScreenOn) {}
}
