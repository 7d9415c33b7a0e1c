// Signature stub (public API of Android 36 / LiteRT 1.4) for the type check in test-core.sh; never packaged.
package android.content;
public abstract class BroadcastReceiver { public abstract void onReceive(Context context, Intent intent); }
