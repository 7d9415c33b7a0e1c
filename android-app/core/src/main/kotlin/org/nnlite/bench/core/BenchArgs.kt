package org.nnlite.bench.core

/** Backends a host may request (PROTOCOL.md, "Backends"). */
enum class Backend(val wire: String) {
    CPU("cpu"), XNNPACK("xnnpack"), GPU("gpu"), NNAPI("nnapi");

    companion object {
        fun fromWire(value: String): Backend? = values().firstOrNull { it.wire == value }

        /** Backends tried in order when the requested delegate cannot be used. */
        fun fallbackChain(requested: Backend): List<Backend> = when (requested) {
            CPU -> listOf(CPU)
            XNNPACK -> listOf(XNNPACK)
            GPU -> listOf(GPU, XNNPACK)
            NNAPI -> listOf(NNAPI, XNNPACK)
        }
    }
}

/** Settings of one run; defaults and checks as nnlite_tui.core.bench.BenchSettings. */
data class BenchSettings(
    val warmup: Int = 5,
    val runs: Int = 50,
    val minSeconds: Double = 1.0,
    val maxRuns: Int = 10_000,
    val maxSeconds: Double = 60.0,
    val threads: Int = 1,
    val backend: Backend = Backend.XNNPACK,
    val seed: Long = 0,
    val requireFullDelegation: Boolean = false,
    val warmupSeconds: Double = 0.5,
    /** Per input: the [low, high) its integer fill stays in (`input_ranges`), or null; empty for none. */
    val inputRanges: List<InputRange?> = emptyList(),
)

/**
 * A parsed, valid intent. [profileOps] and [profileRuns] are the host's request for a per-op profile
 * (PROTOCOL.md, section 9e): accepted so the host can ask every device the same way, but LiteRT's
 * Android Interpreter API has no per-op profiler, so this app answers without an `ops` block.
 * [inputSpec]: the inputs an ExecuTorch program takes (`input_shapes`, `input_dtypes`), null for LiteRT.
 * [energySeconds]: the length of each energy window when `energy` is true, else null (section 9f).
 */
data class BenchRequest(
    val modelPath: String,
    val reportPath: String,
    val runId: String,
    val settings: BenchSettings,
    val profileOps: String? = null,
    val profileRuns: Int = BenchArgs.DEFAULT_PROFILE_RUNS,
    val runtime: Runtime = Runtime.LITERT,
    val inputSpec: List<TensorInfo>? = null,
    val energySeconds: Double? = null,
)

/**
 * A bad intent. [values] holds each extra as parsed (null where missing or unparseable), so the
 * `args` error report echoes what the host sent instead of inventing defaults.
 */
class ArgsException(message: String, val reportPath: String?, val values: Map<String, Any?>) :
    IllegalArgumentException(message)

/** `input_ranges`: a JSON array with, per input, null or [low, high] (integers, low < high). */
object InputRanges {
    fun parse(text: String, errors: MutableList<String>): List<InputRange?> {
        val parsed = try {
            Json.parse(text) as? List<*>
        } catch (e: IllegalArgumentException) {
            null
        }
        val ranges = parsed?.map { r ->
            when {
                r == null -> null
                r is List<*> && r.size == 2 && r.all { it is Long } && (r[0] as Long) < (r[1] as Long) ->
                    InputRange(r[0] as Long, r[1] as Long)
                else -> return invalid(text, errors)
            }
        }
        return ranges ?: invalid(text, errors)
    }

    private fun invalid(text: String, errors: MutableList<String>): List<InputRange?> {
        errors += "input_ranges must be a JSON array of null or [low, high] integer pairs with low < high, got '$text'"
        return emptyList()
    }
}

object BenchArgs {
    const val MODEL_PATH = "model_path"
    const val REPORT_PATH = "report_path"
    const val RUN_ID = "run_id"
    const val DEFAULT_PROFILE_RUNS = 20
    val PROFILE_MODES = listOf("xnnpack", "builtin", "both")

    private val INT_KEYS = listOf("warmup", "runs", "max_runs", "threads", "profile_runs")
    private val FLOAT_KEYS = listOf("min_seconds", "max_seconds", "warmup_seconds", "energy_seconds")
    private val BOOL_KEYS = listOf("require_full_delegation", "energy")
    private val STRING_KEYS = listOf(MODEL_PATH, REPORT_PATH, RUN_ID, "backend", "profile_ops", "runtime", "input_shapes", "input_dtypes",
        "input_ranges")
    val KNOWN_KEYS: Set<String> = (STRING_KEYS + INT_KEYS + FLOAT_KEYS + BOOL_KEYS + "seed").toSet()

    /**
     * Parse intent extras (what `am start --es/--ei/--el/--ef` put in the Bundle). Numbers may
     * also arrive as strings (`--es runs 20`); anything else that does not parse is an error.
     */
    fun parse(extras: Map<String, Any?>, available: Set<Runtime> = Runtime.values().toSet()): BenchRequest {
        val d = BenchSettings()
        val errors = mutableListOf<String>()
        val values = LinkedHashMap<String, Any?>()

        fun str(key: String, required: Boolean): String? {
            val v = extras[key]
            return when {
                v == null && !extras.containsKey(key) -> { if (required) errors += "missing $key"; null }
                v == null -> { errors += "$key is null"; null } // `am start --esn key`
                v !is String -> { errors += "$key must be a string, got ${v::class.java.simpleName}"; null }
                required && v.isBlank() -> { errors += "empty $key"; null }
                else -> v
            }
        }

        fun long(key: String, default: Long): Long? {
            if (!extras.containsKey(key)) return default
            val parsed = asLong(extras[key])
            if (parsed == null) errors += "$key must be an integer, got ${describe(extras[key])}"
            return parsed
        }

        fun double(key: String, default: Double): Double? {
            if (!extras.containsKey(key)) return default
            val parsed = asDouble(extras[key])
            if (parsed == null) errors += "$key must be a finite number, got ${describe(extras[key])}"
            return parsed
        }

        fun bool(key: String, default: Boolean): Boolean? {
            if (!extras.containsKey(key)) return default
            val parsed = when (val v = extras[key]) {
                is Boolean -> v // `--ez key true`
                is String -> when (v.trim().lowercase()) { "true" -> true; "false" -> false; else -> null }
                else -> null
            }
            if (parsed == null) errors += "$key must be true or false, got ${describe(extras[key])}"
            return parsed
        }

        val modelPath = str(MODEL_PATH, required = true)
        val reportPath = str(REPORT_PATH, required = true)
        val runId = str(RUN_ID, required = true)
        val backendName = str("backend", required = false) ?: if (extras.containsKey("backend")) null else d.backend.wire
        val backend = backendName?.let { name ->
            Backend.fromWire(name) ?: run {
                errors += "unknown backend '$name' (one of ${Backend.values().joinToString { it.wire }})"; null
            }
        }
        val warmup = long("warmup", d.warmup.toLong())
        val warmupSeconds = double("warmup_seconds", d.warmupSeconds)
        val runs = long("runs", d.runs.toLong())
        val minSeconds = double("min_seconds", d.minSeconds)
        val maxRuns = long("max_runs", d.maxRuns.toLong())
        val maxSeconds = double("max_seconds", d.maxSeconds)
        val threads = long("threads", d.threads.toLong())
        val seed = long("seed", d.seed)
        val requireFull = bool("require_full_delegation", d.requireFullDelegation)
        val profileOps = str("profile_ops", required = false)
        if (profileOps != null && profileOps !in PROFILE_MODES) {
            errors += "unknown profile_ops '$profileOps' (one of ${PROFILE_MODES.joinToString()})"
        }
        val profileRuns = long("profile_runs", DEFAULT_PROFILE_RUNS.toLong())
        val runtimeName = str("runtime", required = false) ?: if (extras.containsKey("runtime")) null else Runtime.LITERT.wire
        val runtime = runtimeName?.let { name ->
            val r = Runtime.fromWire(name)
            when {
                r == null -> { errors += "unknown runtime '$name' (one of ${Runtime.values().joinToString { it.wire }})"; null }
                r !in available -> {
                    errors += "runtime '$name' is not in this app build (it has ${available.sortedBy { it.ordinal }.joinToString { it.wire }})"; null
                }
                else -> r
            }
        }
        if (runtime != null && backend != null && backend !in runtime.backends) {
            errors += "backend '${backend.wire}' is not available with runtime ${runtime.wire} " +
                "(its program's delegates are fixed at export; it takes ${runtime.backends.joinToString { it.wire }})"
        }
        val shapes = str("input_shapes", required = false)
        val dtypes = str("input_dtypes", required = false)
        val inputSpec = when (runtime) {
            Runtime.EXECUTORCH -> if (shapes == null) {
                if (!extras.containsKey("input_shapes")) errors += "missing input_shapes (runtime executorch needs them: " +
                    "its Java API cannot read a program's input shapes)"
                null
            } else InputSpec.parse(shapes, dtypes, errors)
            null -> null // the runtime itself is the error
            Runtime.LITERT -> {
                for (key in listOf("input_shapes", "input_dtypes").filter { extras.containsKey(it) }) {
                    errors += "$key is for runtime executorch only (LiteRT reads the inputs from the model)"
                }
                null
            }
        }
        val rangesText = str("input_ranges", required = false)
        val inputRanges = rangesText?.let { InputRanges.parse(it, errors) } ?: emptyList()
        val energy = bool("energy", false)
        val energySeconds = double("energy_seconds", EnergyRun.DEFAULT_SECONDS)

        values[MODEL_PATH] = modelPath
        values[RUN_ID] = runId
        values["backend"] = backendName
        values["warmup"] = warmup
        values["warmup_seconds"] = warmupSeconds
        values["runs"] = runs
        values["min_seconds"] = minSeconds
        values["max_runs"] = maxRuns
        values["max_seconds"] = maxSeconds
        values["threads"] = threads
        values["seed"] = seed
        values["require_full_delegation"] = requireFull
        values["runtime"] = runtimeName

        for (key in extras.keys.sorted()) {
            // Extras the platform itself may add are not ours to judge; any other stray key is
            // most likely a typo ("warmups") that would otherwise silently run the default.
            if (key !in KNOWN_KEYS && !key.startsWith("android.") && !key.startsWith("com.android.")) {
                errors += "unknown extra '$key'"
            }
        }
        fun check(ok: Boolean, msg: String) { if (!ok) errors += msg }
        warmup?.let { check(it in 0..Int.MAX_VALUE, "warmup must be >= 0, got $it") }
        runs?.let { check(it in 1..Int.MAX_VALUE, "runs must be >= 1, got $it") }
        maxRuns?.let { check(it in 1..Int.MAX_VALUE, "max_runs must be >= 1, got $it") }
        if (runs != null && maxRuns != null && maxRuns < runs) errors += "max_runs $maxRuns below runs $runs"
        threads?.let { check(it in 1..1024, "threads must be in 1..1024, got $it") }
        minSeconds?.let { check(it >= 0, "min_seconds must be >= 0, got $it") }
        maxSeconds?.let { check(it > 0, "max_seconds must be > 0, got $it") }
        seed?.let { check(it >= 0, "seed must be >= 0, got $it") }
        profileRuns?.let { check(it in 1..Int.MAX_VALUE, "profile_runs must be >= 1, got $it") }
        warmupSeconds?.let { check(it >= 0, "warmup_seconds must be >= 0, got $it") }
        energySeconds?.let {
            check(it in EnergyRun.MIN_SECONDS..EnergyRun.MAX_SECONDS,
                "energy_seconds must be in ${EnergyRun.MIN_SECONDS}..${EnergyRun.MAX_SECONDS}, got $it")
        }

        if (errors.isNotEmpty()) throw ArgsException(errors.joinToString("; "), reportPath, values)
        return BenchRequest(
            modelPath = modelPath!!,
            reportPath = reportPath!!,
            runId = runId!!,
            settings = BenchSettings(
                warmup = warmup!!.toInt(), warmupSeconds = warmupSeconds!!, runs = runs!!.toInt(), minSeconds = minSeconds!!,
                maxRuns = maxRuns!!.toInt(), maxSeconds = maxSeconds!!, threads = threads!!.toInt(),
                backend = backend!!, seed = seed!!, requireFullDelegation = requireFull!!, inputRanges = inputRanges,
            ),
            profileOps = profileOps,
            profileRuns = profileRuns!!.toInt(),
            runtime = runtime!!,
            inputSpec = inputSpec,
            energySeconds = if (energy!!) energySeconds!! else null,
        )
    }

    private fun describe(v: Any?): String = when (v) {
        null -> "null"
        is String -> "'$v'"
        else -> "$v (${v::class.java.simpleName})"
    }

    private fun asLong(v: Any?): Long? = when (v) {
        is Boolean -> null
        is Int, is Long, is Short, is Byte -> (v as Number).toLong()
        is Float, is Double -> asDouble(v)?.let { d -> if (d == Math.rint(d) && Math.abs(d) < 9.0e15) d.toLong() else null }
        is String -> v.trim().toLongOrNull()
        else -> null
    }

    private fun asDouble(v: Any?): Double? {
        val d = when (v) {
            is Int, is Long, is Short, is Byte, is Double -> (v as Number).toDouble()
            // `--ef 0.1` arrives as the float nearest 0.1; its decimal text is what the host meant.
            is Float -> v.toString().toDouble()
            is String -> v.trim().toDoubleOrNull()
            else -> null
        }
        return d?.takeIf { it.isFinite() }
    }
}
