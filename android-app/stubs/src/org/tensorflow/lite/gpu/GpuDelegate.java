// Signature stub (public API of Android 36 / LiteRT 1.4) for the type check in test-core.sh; never packaged.
package org.tensorflow.lite.gpu;
public class GpuDelegate implements org.tensorflow.lite.Delegate {
  public static final class Options extends GpuDelegateFactory.Options {}
  public GpuDelegate(GpuDelegateFactory.Options options) {}
  @Override public long getNativeHandle() { return 0; } @Override public void close() {} }
