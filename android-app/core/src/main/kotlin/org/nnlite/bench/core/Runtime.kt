package org.nnlite.bench.core

/**
 * The on-device runtimes of the protocol (PROTOCOL.md, "Runtimes") and the backends each can run.
 * An ExecuTorch program's delegates are fixed when it is exported: the app runs the XNNPACK-lowered
 * `.pte` that nnlite exports, so `xnnpack` is the only backend it can be asked for.
 */
enum class Runtime(val wire: String, val backends: List<Backend>) {
    LITERT("litert", Backend.values().toList()),
    EXECUTORCH("executorch", listOf(Backend.XNNPACK));

    companion object {
        fun fromWire(value: String): Runtime? = values().firstOrNull { it.wire == value }
    }
}

/**
 * One runtime this app build contains: the version of the library it packages (its Gradle
 * dependency) and how to make an engine for a request (the request carries what the engine needs,
 * e.g. ExecuTorch's input shapes).
 */
class RuntimeProvider(val runtime: Runtime, val version: String, val create: (BenchRequest) -> Engine)

/** The runtimes of one app build. What it announces in every report is [capabilities]. */
class Runtimes(val providers: List<RuntimeProvider>) {
    init {
        require(providers.map { it.runtime }.toSet().size == providers.size) { "a runtime listed twice" }
    }

    val available: Set<Runtime> get() = providers.map { it.runtime }.toSet()

    fun provider(runtime: Runtime): RuntimeProvider? = providers.firstOrNull { it.runtime == runtime }

    /**
     * The report's `capabilities` (protocol 3): the runtimes with their versions and every extra
     * this app accepts, so the host can refuse a unit the installed app cannot run before sending it.
     */
    fun capabilities(): Map<String, Any?> = linkedMapOf(
        "runtimes" to providers.associateTo(LinkedHashMap()) { it.runtime.wire to it.version },
        "extras" to BenchArgs.KNOWN_KEYS.sorted(),
    )

    companion object {
        /** One LiteRT engine for every request (tests and fixtures that predate the runtime extra). */
        fun liteRtOnly(engine: Engine, version: String = "test") = Runtimes(listOf(RuntimeProvider(Runtime.LITERT, version) { engine }))
    }
}

/**
 * What the ExecuTorch Android API says about a loaded method, turned into the protocol's terms.
 * `Module.getMethodMetadata("forward").backends` names the delegates the program uses; it gives no
 * node counts, so how much of the graph XNNPACK took is known only from the export (host side).
 */
object ExecuTorchFacts {
    /** The name ExecuTorch's XNNPACK delegate registers under (backends/xnnpack/runtime/XNNPACKBackend.h). */
    const val XNNPACK_BACKEND = "XnnpackBackend"

    fun delegation(backends: List<String>): Delegation = Delegation.methodBackends(backends)

    /**
     * A `.pte` without the XNNPACK delegate ran on ExecuTorch's own CPU kernels: reported as a fall
     * back to `cpu` (the runtime's built-in kernels, as LiteRT's `cpu`), never as `xnnpack`.
     */
    fun fallback(backends: List<String>): Pair<Backend, String>? =
        if (XNNPACK_BACKEND in backends) null
        else Backend.CPU to "the program's forward method has no $XNNPACK_BACKEND delegate (backends: " +
            "${backends.joinToString().ifEmpty { "none" }}); ExecuTorch ran it on its own CPU kernels"

    /** numpy's name for an ExecuTorch DType (org.pytorch.executorch.DType names). */
    fun numpyDtype(dtype: String): String = when (dtype) {
        "UINT8" -> "uint8"
        "INT8" -> "int8"
        "INT16" -> "int16"
        "INT32" -> "int32"
        "INT64" -> "int64"
        "HALF" -> "float16"
        "FLOAT" -> "float32"
        "DOUBLE" -> "float64"
        "BOOL" -> "bool"
        "BFLOAT16" -> "bfloat16"
        else -> dtype.lowercase()
    }
}

/**
 * ExecuTorch's Java API has no way to ask a program for its inputs' shapes, so the host sends them
 * (`input_shapes`, `input_dtypes`): the shapes it exported the program with.
 */
object InputSpec {
    /** Input dtypes the app can make an ExecuTorch tensor of (Tensor.fromBlob / fromBlobUnsigned). */
    val EXECUTORCH_DTYPES = listOf("float32", "float64", "float16", "int8", "uint8", "int32", "int64")

    /** [shapes] as JSON `[[1,3,224,224],[1,10]]`, [dtypes] as JSON `["float32","int64"]` (default all float32). */
    fun parse(shapes: String, dtypes: String?, errors: MutableList<String>): List<TensorInfo>? {
        val parsedShapes = try {
            (Json.parse(shapes) as? List<*>)?.map { s -> (s as? List<*>)?.map { d -> (d as? Long)?.takeIf { it >= 0 } } }
        } catch (e: IllegalArgumentException) {
            null
        }
        if (parsedShapes == null || parsedShapes.any { it == null || it.any { d -> d == null } }) {
            errors += "input_shapes must be a JSON array of arrays of integers >= 0, got '$shapes'"
            return null
        }
        val names = if (dtypes == null) List(parsedShapes.size) { "float32" } else try {
            (Json.parse(dtypes) as? List<*>)?.map { it as? String }
        } catch (e: IllegalArgumentException) {
            null
        }
        if (names == null || names.any { it == null }) {
            errors += "input_dtypes must be a JSON array of dtype names, got '$dtypes'"
            return null
        }
        if (names.size != parsedShapes.size) {
            errors += "input_dtypes has ${names.size} entries for ${parsedShapes.size} input_shapes"
            return null
        }
        val unknown = names.filter { it !in InputFill.DTYPE_SIZES }
        if (unknown.isNotEmpty()) {
            errors += "unknown input dtype ${unknown.joinToString { "'$it'" }} (one of ${InputFill.DTYPE_SIZES.keys.joinToString()})"
            return null
        }
        return parsedShapes.mapIndexed { i, shape ->
            val dims = shape!!.map { it!! }
            var bytes = InputFill.DTYPE_SIZES.getValue(names[i]!!).toLong()
            for (d in dims) {
                bytes = if (d > Int.MAX_VALUE) Long.MAX_VALUE else bytes * d // both factors < 2^31: no overflow
                if (bytes > Int.MAX_VALUE) {
                    errors += "input $i of shape $dims needs more than 2 GiB"
                    return null
                }
            }
            TensorInfo(dims.map { it.toInt() }, names[i]!!, bytes.toInt())
        }
    }
}
