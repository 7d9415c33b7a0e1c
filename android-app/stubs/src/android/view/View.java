// Signature stub (public API of Android 36 / LiteRT 1.4) for the type check in test-core.sh; never packaged.
package android.view;
public class View { public View(android.content.Context c) {} public void setPadding(int l, int t, int r, int b) {} }
