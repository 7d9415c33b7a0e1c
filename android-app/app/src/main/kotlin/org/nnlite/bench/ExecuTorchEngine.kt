package org.nnlite.bench

import android.os.Build
import org.nnlite.bench.core.Backend
import org.nnlite.bench.core.Delegation
import org.nnlite.bench.core.Engine
import org.nnlite.bench.core.ExecuTorchFacts
import org.nnlite.bench.core.FillRecord
import org.nnlite.bench.core.InputFill
import org.nnlite.bench.core.InputRange
import org.nnlite.bench.core.InputSpec
import org.nnlite.bench.core.StageException
import org.nnlite.bench.core.TensorInfo
import org.pytorch.executorch.EValue
import org.pytorch.executorch.Module
import org.pytorch.executorch.Tensor
import java.nio.ByteBuffer

/**
 * ExecuTorch's `Module` behind the core's [Engine] (PROTOCOL.md, "Runtimes"). The `.pte`'s delegates
 * were chosen at export (XNNPACK); the app cannot switch them, so the only backend is `xnnpack`, and a
 * program without the XNNPACK delegate is reported as having run on ExecuTorch's CPU kernels.
 *
 * - load: `Module.load(path, LOAD_MODE_MMAP, threads)` reads the program (mapped, as LiteRT maps its model);
 * - allocate: `loadMethod("forward")` initialises the delegates (XNNPACK packs the weights) and plans the
 *   memory, the counterpart of LiteRT's allocateTensors; the method's backends come from its metadata;
 * - invoke: one `forward(inputs)` on tensors that wrap the preallocated, seeded input buffers. Besides the
 *   inference it copies each input into the program's planned input memory and wraps each output in a new
 *   Java Tensor; the Java API has no per-inference timer, so there is no native time.
 *
 * The inputs' shapes and dtypes come from the host ([spec]): the Java API cannot read them from a program.
 */
class ExecuTorchEngine(private val spec: List<TensorInfo>) : Engine {
    private var module: Module? = null
    private var backends: List<String> = emptyList()
    private var inputs: Array<EValue> = emptyArray()
    private var lastResult: Array<EValue>? = null
    private var filled: List<FillRecord>? = null

    override fun load(modelPath: String, backend: Backend, threads: Int) {
        release()
        module = try {
            Module.load(modelPath, Module.LOAD_MODE_MMAP, threads)
        } catch (e: LinkageError) {
            // Module's class initialiser loads libexecutorch.so: on an ABI the AAR lacks this is an
            // ExceptionInInitializerError (then NoClassDefFoundError) whose own message is empty.
            val root = generateSequence<Throwable>(e) { it.cause }.last()
            throw IllegalStateException("ExecuTorch's native library cannot be loaded on this device (ABIs " +
                "${Build.SUPPORTED_ABIS.joinToString()}; executorch-android ships arm64-v8a and x86_64): " +
                "${root::class.java.name}: ${root.message}", e)
        }
    }

    override fun allocate() {
        val m = checkNotNull(module) { "allocate before load" }
        m.loadMethod(METHOD)
        backends = m.getMethodMetadata(METHOD).backends.toList()
    }

    override fun inputs(): List<TensorInfo> = spec

    /** The shapes of the last forward's results (the Java API shows outputs nowhere else). */
    override fun outputs(): List<TensorInfo> = checkNotNull(lastResult) { "outputs before the first forward" }.map { value ->
        if (!value.isTensor) return@map TensorInfo(emptyList(), scalarDtype(value), 0)
        val t = value.toTensor()
        val dtype = ExecuTorchFacts.numpyDtype(t.dtype().name)
        TensorInfo(t.shape().map { it.toInt() }, dtype, (t.numel() * (InputFill.DTYPE_SIZES[dtype] ?: 0)).toInt())
    }

    private fun scalarDtype(value: EValue): String = when {
        value.isInt -> "int64"
        value.isDouble -> "float64"
        value.isBool -> "bool"
        value.isString -> "str"
        else -> "none"
    }

    override fun prepareInputs(seed: Long, ranges: List<InputRange?>) {
        val buffers = spec.map { InputFill.allocate(it.numBytes) }
        filled = InputFill.fillAll(buffers, spec, seed, ranges)
        inputs = Array(spec.size) { i -> EValue.from(tensorOf(buffers[i], spec[i])) }
    }

    /** A tensor over [buffer] itself (direct, native order): the seeded values are never copied on the Java side. */
    private fun tensorOf(buffer: ByteBuffer, info: TensorInfo): Tensor {
        val shape = LongArray(info.shape.size) { info.shape[it].toLong() }
        return when (info.dtype) {
            "float32" -> Tensor.fromBlob(buffer.asFloatBuffer(), shape)
            "float64" -> Tensor.fromBlob(buffer.asDoubleBuffer(), shape)
            "float16" -> Tensor.fromBlob(buffer.asShortBuffer(), shape)
            "int8" -> Tensor.fromBlob(buffer, shape)
            "uint8" -> Tensor.fromBlobUnsigned(buffer, shape)
            "int32" -> Tensor.fromBlob(buffer.asIntBuffer(), shape)
            "int64" -> Tensor.fromBlob(buffer.asLongBuffer(), shape)
            else -> throw StageException.protocol("invoke", "input dtype ${info.dtype} cannot be fed through ExecuTorch's " +
                "Java API (Tensor.fromBlob takes ${InputSpec.EXECUTORCH_DTYPES.joinToString()})")
        }
    }

    override fun inputFill(): List<FillRecord>? = filled

    override fun invoke() {
        lastResult = module!!.forward(*inputs)
    }

    override fun delegation(): Delegation = ExecuTorchFacts.delegation(backends)

    override fun runtimeFallback(): Pair<Backend, String>? = ExecuTorchFacts.fallback(backends)

    override fun release() {
        module?.destroy()
        module = null
        backends = emptyList()
        inputs = emptyArray()
        lastResult = null
    }

    companion object {
        const val METHOD = "forward"
    }
}
