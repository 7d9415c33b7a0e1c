package org.nnlite.bench

import android.os.Build
import org.nnlite.bench.core.Backend
import org.nnlite.bench.core.Delegation
import org.nnlite.bench.core.Engine
import org.nnlite.bench.core.FillRecord
import org.nnlite.bench.core.InputFill
import org.nnlite.bench.core.InputRange
import org.nnlite.bench.core.TensorInfo
import org.tensorflow.lite.Delegate
import org.tensorflow.lite.Interpreter
import org.tensorflow.lite.gpu.CompatibilityList
import org.tensorflow.lite.gpu.GpuDelegate
import org.tensorflow.lite.nnapi.NnApiDelegate
import java.io.File
import java.io.IOException
import java.nio.ByteBuffer

/** Thrown when a requested delegate cannot be created on this device; the core falls back. */
class DelegateUnavailableException(message: String) : Exception(message)

/**
 * The LiteRT Interpreter behind the core's [Engine]. Backends:
 * - cpu: the interpreter's built-in kernels, XNNPACK off (as Python's BUILTIN_WITHOUT_DEFAULT_DELEGATES);
 * - xnnpack: XNNPACK on (LiteRT's default CPU path);
 * - gpu: GpuDelegate with CompatibilityList's best options; refused up front where unsupported;
 * - nnapi: NnApiDelegate (API 27+) without NNAPI's own CPU reference device, so "nnapi" means
 *   an accelerator driver; NNAPI errors seen after the runs are reported as a fallback.
 */
class LiteRtEngine : Engine {
    private var interpreter: Interpreter? = null
    private var delegate: Delegate? = null
    private var nnapi: NnApiDelegate? = null
    private var inputBuffers: Array<ByteBuffer> = emptyArray()
    private var inputArray: Array<Any> = emptyArray() // the same buffers, typed for runForMultipleInputsOutputs
    private var outputBuffers: Map<Int, ByteBuffer> = emptyMap()
    private var singleOutput: ByteBuffer? = null
    private var backend: Backend = Backend.XNNPACK
    private var attemptStartMs = 0L // this attempt's tflite lines are those logged from here on

    override fun load(modelPath: String, backend: Backend, threads: Int) {
        release()
        this.backend = backend
        // Only a clock read here: load() is inside the timed init region, logcat is read afterwards.
        attemptStartMs = System.currentTimeMillis()
        val options = Interpreter.Options().setNumThreads(threads)
        when (backend) {
            Backend.CPU -> options.setUseXNNPACK(false)
            Backend.XNNPACK -> options.setUseXNNPACK(true)
            Backend.GPU -> {
                val compat = CompatibilityList()
                try {
                    if (!compat.isDelegateSupportedOnThisDevice) {
                        throw DelegateUnavailableException("GPU delegate not supported on this device (CompatibilityList)")
                    }
                    delegate = GpuDelegate(compat.bestOptionsForThisDevice).also { options.addDelegate(it) }
                } finally {
                    compat.close()
                }
            }
            Backend.NNAPI -> {
                if (Build.VERSION.SDK_INT < Build.VERSION_CODES.O_MR1) {
                    throw DelegateUnavailableException("NNAPI delegate needs API 27+, device has ${Build.VERSION.SDK_INT}")
                }
                val nn = NnApiDelegate(NnApiDelegate.Options().setUseNnapiCpu(false))
                nnapi = nn
                delegate = nn
                options.addDelegate(nn)
            }
        }
        interpreter = Interpreter(File(modelPath), options)
    }

    override fun allocate() {
        val it = checkNotNull(interpreter) { "allocate before load" }
        it.allocateTensors()
        inputBuffers = Array(it.inputTensorCount) { i -> InputFill.allocate(it.getInputTensor(i).numBytes()) }
        inputArray = Array(inputBuffers.size) { i -> inputBuffers[i] }
        val outs = (0 until it.outputTensorCount)
            .filter { i -> it.getOutputTensor(i).numBytes() > 0 } // dynamic outputs are left in the tensor
            .associateWith { i -> InputFill.allocate(it.getOutputTensor(i).numBytes()) }
        outputBuffers = outs
        singleOutput = if (inputBuffers.size == 1 && it.outputTensorCount == 1) outs[0] else null
    }

    override fun inputs(): List<TensorInfo> {
        val it = checkNotNull(interpreter)
        return (0 until it.inputTensorCount).map { i -> info(it.getInputTensor(i)) }
    }

    override fun outputs(): List<TensorInfo> {
        val it = checkNotNull(interpreter)
        return (0 until it.outputTensorCount).map { i -> info(it.getOutputTensor(i)) }
    }

    private fun info(t: org.tensorflow.lite.Tensor): TensorInfo {
        val q = t.quantizationParams()
        return TensorInfo(t.shape().toList(), t.dataType().name.lowercase(), t.numBytes(), q.scale, q.zeroPoint)
    }

    private var filled: List<FillRecord>? = null

    override fun prepareInputs(seed: Long, ranges: List<InputRange?>) {
        filled = InputFill.fillAll(inputBuffers.toList(), inputs(), seed, ranges)
    }

    override fun inputFill(): List<FillRecord>? = filled

    /**
     * One Interpreter.run on the preallocated direct buffers. Besides the inference it copies the
     * input buffer into the input tensor and the output tensor out (memcpy of the tensors' bytes):
     * the Java API has no bare invoke(). Rewinding the buffers is what makes them reusable.
     */
    override fun invoke() {
        val it = interpreter!!
        for (b in inputBuffers) b.rewind()
        for (b in outputBuffers.values) b.rewind()
        val single = singleOutput
        if (single != null) {
            it.run(inputBuffers[0], single)
        } else {
            it.runForMultipleInputsOutputs(inputArray, outputBuffers)
        }
    }

    override fun lastNativeNs(): Long? = interpreter?.lastNativeInferenceDurationNanoseconds

    /**
     * The `tflite` lines this attempt logged. logd receives a line asynchronously, so a delegate's
     * line may lag its call by a moment: read again briefly before concluding that none came.
     */
    override fun delegation(): Delegation {
        var parsed = Delegation.parse(emptyList())
        for (attempt in 0 until 4) {
            val lines = try {
                TfliteLog.since(attemptStartMs)
            } catch (e: IOException) {
                return Delegation.unreadable("logcat", "${e::class.java.name}: ${e.message}")
            }
            parsed = Delegation.parse(lines)
            if (parsed.applied.isNotEmpty() || backend == Backend.CPU) break
            Thread.sleep(50)
        }
        return parsed
    }

    override fun runtimeFallback(): Pair<Backend, String>? {
        val errno = nnapi?.nnapiErrno ?: return null
        if (errno == 0) return null
        return Backend.CPU to "NnApiDelegate reported NNAPI errno $errno; LiteRT ran the failed work on its CPU kernels"
    }

    override fun release() {
        interpreter?.close()
        interpreter = null
        delegate?.close()
        delegate = null
        nnapi = null
        inputBuffers = emptyArray()
        inputArray = emptyArray()
        outputBuffers = emptyMap()
        singleOutput = null
    }
}
