// Signature stub (public API of Android 36 / LiteRT 1.4) for the type check in test-core.sh; never packaged.
package org.tensorflow.lite;
public final class Interpreter implements AutoCloseable {
  public static class Options { public Options setNumThreads(int n) { return this; } public Options setUseXNNPACK(boolean b) { return this; }
    public Options addDelegate(Delegate d) { return this; } }
  public Interpreter(java.io.File modelFile, Options options) {}
  public void run(Object input, Object output) {}
  public void runForMultipleInputsOutputs(Object[] inputs, java.util.Map<Integer, Object> outputs) {}
  public void allocateTensors() {}
  public Long getLastNativeInferenceDurationNanoseconds() { return null; }
  public int getInputTensorCount() { return 0; } public int getOutputTensorCount() { return 0; }
  public Tensor getInputTensor(int i) { return null; } public Tensor getOutputTensor(int i) { return null; }
  @Override public void close() {}
}
