// Signature stub (public API of Android 36 / LiteRT 1.4) for the type check in test-core.sh; never packaged.
package android.widget;
public class TextView extends android.view.View { public TextView(android.content.Context c) { super(c); }
  public CharSequence getText() { return null; } public final void setText(CharSequence text) {} }
