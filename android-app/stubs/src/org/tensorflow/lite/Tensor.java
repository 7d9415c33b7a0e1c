// Signature stub (public API of Android 36 / LiteRT 1.4) for the type check in test-core.sh; never packaged.
package org.tensorflow.lite;
public interface Tensor {
    DataType dataType(); int numBytes(); int[] shape(); QuantizationParams quantizationParams();
    class QuantizationParams {
        public QuantizationParams(float scale, int zeroPoint) { throw new UnsupportedOperationException(); }
        public float getScale() { throw new UnsupportedOperationException(); }
        public int getZeroPoint() { throw new UnsupportedOperationException(); }
    }
}
