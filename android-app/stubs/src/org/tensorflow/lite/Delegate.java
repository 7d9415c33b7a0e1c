// Signature stub (public API of Android 36 / LiteRT 1.4) for the type check in test-core.sh; never packaged.
package org.tensorflow.lite;
public interface Delegate extends java.io.Closeable { long getNativeHandle(); @Override default void close() {} }
