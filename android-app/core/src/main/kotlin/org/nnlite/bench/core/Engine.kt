package org.nnlite.bench.core

/**
 * A tensor as the report describes it; dtype uses numpy's names ("float32", "int8", ...).
 * scale/zeroPoint: its per-tensor quantization (scale 0 when it is not quantized).
 */
data class TensorInfo(val shape: List<Int>, val dtype: String, val numBytes: Int, val scale: Float = 0f,
                      val zeroPoint: Int = 0)

/**
 * The valid values [low, high) of an integer input (token ids inside their embedding table), as the
 * host sends them in `input_ranges` (PROTOCOL.md, "Input").
 */
data class InputRange(val low: Long, val high: Long)

/** What one input was filled with (the report's `input_fill`; Python: input_check.fill_record). */
data class FillRecord(val dtype: String, val scale: Float, val zeroPoint: Int, val elements: Int, val mean: Double,
                      val std: Double, val min: Double? = null, val max: Double? = null, val range: InputRange? = null) {
    fun toMap(): Map<String, Any?> = linkedMapOf<String, Any?>("dtype" to dtype, "scale" to scale.toDouble(),
        "zero_point" to zeroPoint, "elements" to elements, "mean" to mean, "std" to std, "min" to min, "max" to max)
        .also { m -> range?.let { m["range"] = listOf(it.low, it.high) } }
}

/**
 * A failure at one protocol stage ("load", "allocate", "invoke"). [errorType] is the class name of
 * the underlying exception, or "BenchmarkError" when the protocol itself detected the problem
 * (the same convention as Python's BenchmarkError).
 */
class StageException(val stage: String, val errorType: String, message: String, cause: Throwable? = null) :
    Exception(message, cause) {
    companion object {
        fun of(stage: String, cause: Throwable) =
            StageException(stage, cause::class.java.name, firstLine(cause.message) ?: cause::class.java.simpleName, cause)

        fun protocol(stage: String, message: String) = StageException(stage, "BenchmarkError", message)
    }
}

/** The first non-blank line of a message, trimmed (LiteRT messages can be long). */
fun firstLine(text: String?): String? = text?.lineSequence()?.map { it.trim() }?.firstOrNull { it.isNotEmpty() }

/**
 * What the protocol needs from a runtime. The Android app implements it with the LiteRT
 * Interpreter; the JVM tests with a scripted fake. The protocol (timing, fallback, loop) lives in
 * [Benchmark], not here, so it is the same code on both.
 */
interface Engine {
    /** Create the interpreter for [backend] (model mapped, delegate applied). Throw on failure. */
    fun load(modelPath: String, backend: Backend, threads: Int)

    /** Allocate tensors. Throw on failure. */
    fun allocate()

    /** Release the interpreter and delegate of a failed or finished attempt; safe to call twice. */
    fun release()

    fun inputs(): List<TensorInfo>

    fun outputs(): List<TensorInfo>

    /**
     * Fill preallocated input buffers with the seeded input (untimed, once per run); an integer input
     * with a range in [ranges] (by input index; empty for none) stays inside it ([InputFill.fillAll]).
     */
    fun prepareInputs(seed: Long, ranges: List<InputRange?>)

    /** What [prepareInputs] fed each input ([InputFill.record] of its buffers); null if it cannot tell. */
    fun inputFill(): List<FillRecord>? = null

    /** Exactly one inference (Interpreter.run on the preallocated buffers): the timed region. */
    fun invoke()

    /**
     * After the timed runs: a reason if the runtime reports that the delegate did not really run
     * (for example NNAPI execution errors), as (backend that actually ran, reason); else null.
     */
    fun runtimeFallback(): Pair<Backend, String>? = null

    /**
     * The interpreter's own duration of the last [invoke], without the Java API's buffer copies
     * (Interpreter.getLastNativeInferenceDurationNanoseconds); null where the runtime has none.
     */
    fun lastNativeNs(): Long? = null

    /** What the backend's delegate took of the graph, for the attempt that was just loaded and allocated. */
    fun delegation(): Delegation = Delegation.unreadable("none", "this engine cannot tell")
}
