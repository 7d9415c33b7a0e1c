// Signature stub (public API of Android 36 / LiteRT 1.4) for the type check in test-core.sh; never packaged.
package org.tensorflow.lite;
public enum DataType { FLOAT32, INT32, UINT8, INT64, STRING, BOOL, INT16, INT8 }
