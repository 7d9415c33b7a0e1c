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
    const val PROTOCOL_VERSION = 2
    const val APP_VERSION = "0.2.0"
    val STAGES = listOf("args", "load", "allocate", "invoke", "internal")
    val SETTINGS_KEYS = listOf("threads", "warmup", "warmup_seconds", "runs", "min_seconds", "seed", "require_full_delegation")

    /** What the wall clock surrounds on the device (PROTOCOL.md, "Timing"). */
    const val WALL_CLOCK = "Interpreter.run"
    const val NATIVE_CLOCK = "Interpreter.getLastNativeInferenceDurationNanoseconds"

    /** Which timing `stats` (and so a report's median `duration`) is of, and what each clock covers. */
    fun timing(hasNative: Boolean): Map<String, Any?> = linkedMapOf(
        "stats_of" to "wall",
        "wall_clock" to WALL_CLOCK,
        "native_clock" to if (hasNative) NATIVE_CLOCK else null,
    )

    class Envelope(val device: DeviceInfo, val startedAtMs: Long, val finishedAtMs: Long, val simulated: Boolean = false)

    fun valid(request: BenchRequest, outcome: BackendOutcome, m: Measured, env: Envelope): Map<String, Any?> {
        val r = head(env, valid = true, stage = null, type = null, message = null)
        r.putAll(settingsBlock(request.runId, request.modelPath, request.settings, outcome.used.wire))
        r["init_ns"] = m.initNs
        r["first_inference_ns"] = m.firstInferenceNs
        r["stats"] = m.summary.toMap()
        r["samples_ns"] = m.samplesNs.asList()
        r["timed_seconds"] = m.timedSeconds
        r["input_shapes"] = m.inputs.map { it.shape }
        r["input_dtypes"] = m.inputs.map { it.dtype }
        m.inputFill?.let { fill -> r["input_fill"] = fill.map { it.toMap() } }
        r["output_shapes"] = m.outputs.map { it.shape }
        r["timing"] = timing(m.nativeSamplesNs != null)
        r["native_stats"] = m.nativeSummary?.toMap()
        r["native_samples_ns"] = m.nativeSamplesNs?.asList()
        r["warmup_runs"] = m.warmupRuns
        r["warmup_mean_ns"] = m.warmupMeanNs
        r["delegation"] = m.delegation?.toMap()
        r["memory"] = m.memory
        r["conditions"] = m.conditions
        return tail(r, outcome.fallbackReason, env)
    }

    fun failed(request: BenchRequest, outcome: BackendOutcome, error: StageException, env: Envelope): Map<String, Any?> {
        val r = head(env, valid = false, stage = error.stage, type = error.errorType, message = error.message ?: error.errorType)
        r.putAll(settingsBlock(request.runId, request.modelPath, request.settings, outcome.used.wire))
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

    private fun settingsBlock(runId: String, modelPath: String, s: BenchSettings, used: String): Map<String, Any?> = linkedMapOf(
        "run_id" to runId,
        "model_path" to modelPath,
        "backend_requested" to s.backend.wire,
        "backend_used" to used,
        "threads" to s.threads,
        "warmup" to s.warmup,
        "warmup_seconds" to s.warmupSeconds,
        "runs" to s.runs,
        "min_seconds" to s.minSeconds,
        "seed" to s.seed,
        "require_full_delegation" to s.requireFullDelegation,
    )

    private fun tail(r: LinkedHashMap<String, Any?>, fallbackReason: String?, env: Envelope): Map<String, Any?> {
        r["fallback_reason"] = fallbackReason
        r["started_at_ms"] = env.startedAtMs
        r["finished_at_ms"] = env.finishedAtMs
        r["device"] = env.device.toMap()
        return r
    }
}
