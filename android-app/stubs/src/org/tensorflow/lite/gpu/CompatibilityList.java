// Signature stub (public API of Android 36 / LiteRT 1.4) for the type check in test-core.sh; never packaged.
package org.tensorflow.lite.gpu;
public class CompatibilityList implements java.io.Closeable {
  public boolean isDelegateSupportedOnThisDevice() { return false; }
  public GpuDelegate.Options getBestOptionsForThisDevice() { return null; } @Override public void close() {} }
