package org.nnlite.bench.core

/** Real device facts (android.os.Build on the device); soc_* are null below API 31. */
data class DeviceInfo(
    val manufacturer: String,
    val model: String,
    val brand: String,
    val device: String,
    val product: String,
    val board: String,
    val hardware: String,
    val socManufacturer: String?,
    val socModel: String?,
    val abis: List<String>,
    val sdkInt: Int,
    val release: String,
    val buildId: String,
    val fingerprint: String,
) {
    fun toMap(): Map<String, Any?> = linkedMapOf(
        "manufacturer" to manufacturer, "model" to model, "brand" to brand, "device" to device,
        "product" to product, "board" to board, "hardware" to hardware,
        "soc_manufacturer" to socManufacturer, "soc_model" to socModel, "abis" to abis,
        "sdk_int" to sdkInt, "release" to release, "build_id" to buildId, "fingerprint" to fingerprint,
    )
}

/**
 * The report (PROTOCOL.md, "Report"): Python's bench.benchmark_result block plus the app's keys.
 * Measured keys are present only when valid; a failure carries error_stage/type/message.
 */
object Report {
    const val PROTOCOL_VERSION = 3
    const val APP_VERSION = "0.3.0"
    val STAGES = listOf("args", "load", "allocate", "invoke", "internal")
    val SETTINGS_KEYS = listOf("threads", "warmup", "warmup_seconds", "runs", "min_seconds", "seed", "require_full_delegation")

    /** What the wall clock surrounds on the device, per runtime (PROTOCOL.md, "Timing"). */
    val WALL_CLOCKS = mapOf(Runtime.LITERT to "Interpreter.run", Runtime.EXECUTORCH to "Module.forward")
    const val NATIVE_CLOCK = "Interpreter.getLastNativeInferenceDurationNanoseconds"

    /**
     * Which timing `stats` (and so a report's median `duration`) is of, and what each clock covers.
     * ExecuTorch's Java API has no per-inference timer of its own, so its native clock is always null.
     */
    fun timing(hasNative: Boolean, runtime: Runtime = Runtime.LITERT): Map<String, Any?> = linkedMapOf(
        "stats_of" to "wall",
        "wall_clock" to WALL_CLOCKS.getValue(runtime),
        "native_clock" to if (hasNative && runtime == Runtime.LITERT) NATIVE_CLOCK else null,
    )

    /** [runtimes]: what this app build has (its `capabilities`, and each runtime's version). */
    class Envelope(val device: DeviceInfo, val startedAtMs: Long, val finishedAtMs: Long, val simulated: Boolean = false,
                   val runtimes: Runtimes = Runtimes(emptyList()))

    fun valid(request: BenchRequest, outcome: BackendOutcome, m: Measured, env: Envelope): Map<String, Any?> {
        val r = head(env, valid = true, stage = null, type = null, message = null)
        r.putAll(settingsBlock(request, outcome.used.wire, env))
        r["init_ns"] = m.initNs
        r["first_inference_ns"] = m.firstInferenceNs
        r["stats"] = m.summary.toMap()
        r["samples_ns"] = m.samplesNs.asList()
        r["timed_seconds"] = m.timedSeconds
        r["input_shapes"] = m.inputs.map { it.shape }
        r["input_dtypes"] = m.inputs.map { it.dtype }
        m.inputFill?.let { fill -> r["input_fill"] = fill.map { it.toMap() } }
        r["output_shapes"] = m.outputs.map { it.shape }
        r["timing"] = timing(m.nativeSamplesNs != null, request.runtime)
        r["native_stats"] = m.nativeSummary?.toMap()
        r["native_samples_ns"] = m.nativeSamplesNs?.asList()
        r["warmup_runs"] = m.warmupRuns
        r["warmup_mean_ns"] = m.warmupMeanNs
        r["delegation"] = m.delegation?.toMap()
        r["memory"] = m.memory
        r["conditions"] = m.conditions
        m.energy?.let { r["energy"] = it }
        return tail(r, outcome.fallbackReason, env)
    }

    fun failed(request: BenchRequest, outcome: BackendOutcome, error: StageException, env: Envelope): Map<String, Any?> {
        val r = head(env, valid = false, stage = error.stage, type = error.errorType, message = error.message ?: error.errorType)
        r.putAll(settingsBlock(request, outcome.used.wire, env))
        return tail(r, outcome.fallbackReason, env)
    }

    /** An `args` failure: settings echo what was parsed, null where missing or unparseable. */
    fun argsFailed(error: ArgsException, env: Envelope): Map<String, Any?> {
        val r = head(env, valid = false, stage = "args", type = ArgsException::class.java.name, message = error.message ?: "bad intent")
        val v = error.values
        r["run_id"] = v[BenchArgs.RUN_ID]
        r["model_path"] = v[BenchArgs.MODEL_PATH]
        r["backend_requested"] = v["backend"]
        r["backend_used"] = null
        val runtime = v["runtime"] as String?
        r["runtime"] = runtime
        r["runtime_version"] = runtime?.let { Runtime.fromWire(it) }?.let { env.runtimes.provider(it)?.version }
        for (key in SETTINGS_KEYS) r[key] = v[key]
        return tail(r, null, env)
    }

    private fun head(env: Envelope, valid: Boolean, stage: String?, type: String?, message: String?): LinkedHashMap<String, Any?> {
        val r = LinkedHashMap<String, Any?>()
        r["protocol_version"] = PROTOCOL_VERSION
        r["app_version"] = APP_VERSION
        r["simulated"] = env.simulated
        r["valid"] = valid
        r["error_stage"] = stage
        r["error_type"] = type
        r["error_message"] = message
        return r
    }

    private fun settingsBlock(request: BenchRequest, used: String, env: Envelope): Map<String, Any?> = linkedMapOf(
        "run_id" to request.runId,
        "model_path" to request.modelPath,
        "backend_requested" to request.settings.backend.wire,
        "backend_used" to used,
        "runtime" to request.runtime.wire,
        "runtime_version" to env.runtimes.provider(request.runtime)?.version,
        "threads" to request.settings.threads,
        "warmup" to request.settings.warmup,
        "warmup_seconds" to request.settings.warmupSeconds,
        "runs" to request.settings.runs,
        "min_seconds" to request.settings.minSeconds,
        "seed" to request.settings.seed,
        "require_full_delegation" to request.settings.requireFullDelegation,
    )

    private fun tail(r: LinkedHashMap<String, Any?>, fallbackReason: String?, env: Envelope): Map<String, Any?> {
        r["fallback_reason"] = fallbackReason
        r["started_at_ms"] = env.startedAtMs
        r["finished_at_ms"] = env.finishedAtMs
        r["capabilities"] = env.runtimes.capabilities()
        r["device"] = env.device.toMap()
        return r
    }
}
