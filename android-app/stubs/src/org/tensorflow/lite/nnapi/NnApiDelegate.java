// Signature stub (public API of Android 36 / LiteRT 1.4) for the type check in test-core.sh; never packaged.
package org.tensorflow.lite.nnapi;
public class NnApiDelegate implements org.tensorflow.lite.Delegate, AutoCloseable {
  public static final class Options { public Options setUseNnapiCpu(boolean b) { return this; } }
  public NnApiDelegate(Options options) {} public int getNnapiErrno() { return 0; }
  @Override public long getNativeHandle() { return 0; } @Override public void close() {} }
