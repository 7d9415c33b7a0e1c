package org.nnlite.bench.core

/** Why a report that was asked for a per-op profile has none (PROTOCOL.md, section 9e). */
const val NO_OPS_PROFILE_REASON = "LiteRT's Android Interpreter API has no per-op profiler; the report has no ops block"

/**
 * ExecuTorch's Module.etdump() writes an ETDump only from an AAR built with the event tracer
 * (EXECUTORCH_ANDROID_PROFILING, off in the published executorch-android), and the app cannot read one.
 */
const val NO_OPS_PROFILE_REASON_EXECUTORCH = "the published ExecuTorch Android library is built without its event " +
    "tracer, so Module.etdump() records no per-op events; the report has no ops block"

fun noOpsProfileReason(runtime: Runtime): String =
    if (runtime == Runtime.EXECUTORCH) NO_OPS_PROFILE_REASON_EXECUTORCH else NO_OPS_PROFILE_REASON

/** Log lines go to logcat under tag NNLiteBench on the device (PROTOCOL.md, "Logcat"). */
interface BenchLog {
    fun info(message: String)
    fun error(message: String, error: Throwable? = null)
}

/** What one launch did: the report written (or null) and where. */
class RunResult(val report: Map<String, Any?>?, val reportPath: String?, val written: Boolean)

/**
 * One launch of the app, start to finish, with no Android in it: parse the extras, pick the engine
 * of the requested runtime, run the protocol, build the report, write it atomically, log. Never
 * throws: every failure ends as a `valid: false` report when report_path is known, and as an error
 * line in the log always.
 */
class BenchRunner(
    private val runtimes: Runtimes,
    private val device: () -> DeviceInfo,
    private val log: BenchLog,
    private val clock: NanoClock = NanoClock { System.nanoTime() },
    private val wallMs: () -> Long = { System.currentTimeMillis() },
    private val fileExists: (String) -> Boolean = { java.io.File(it).isFile },
    private val probe: DeviceProbe? = null,
    private val meter: EnergyMeter? = null,
) {
    /** One LiteRT engine for every request (the tests of the protocol loop). */
    constructor(
        engine: Engine,
        device: () -> DeviceInfo,
        log: BenchLog,
        clock: NanoClock = NanoClock { System.nanoTime() },
        wallMs: () -> Long = { System.currentTimeMillis() },
        fileExists: (String) -> Boolean = { java.io.File(it).isFile },
        probe: DeviceProbe? = null,
        meter: EnergyMeter? = null,
    ) : this(Runtimes.liteRtOnly(engine), device, log, clock, wallMs, fileExists, probe, meter)

    fun execute(extras: Map<String, Any?>): RunResult {
        val startedAt = wallMs()
        val request = try {
            BenchArgs.parse(extras, runtimes.available)
        } catch (e: ArgsException) {
            log.error("ERROR stage=args type=${ArgsException::class.java.name} message=${e.message}")
            val path = e.reportPath ?: run {
                log.error("no report written: report_path missing")
                return RunResult(null, null, false)
            }
            return write(path, guarded(path, null) { Report.argsFailed(e, envelope(startedAt)) })
        }
        log.info("START run_id=${request.runId} model=${request.modelPath} runtime=${request.runtime.wire} " +
            "backend=${request.settings.backend.wire} threads=${request.settings.threads} warmup=${request.settings.warmup} " +
            "runs=${request.settings.runs}")
        request.profileOps?.let { log.info("NO_OPS_PROFILE profile_ops=$it: ${noOpsProfileReason(request.runtime)}") }
        val outcome = BackendOutcome(request.settings.backend, null)
        val report = guarded(request.reportPath, request) {
            // BenchArgs.parse accepted only the runtimes this build has.
            val engine = runtimes.provider(request.runtime)!!.create(request)
            try {
                val measured = Benchmark.run(request.modelPath, request.settings, engine, clock, outcome, probe,
                    request.energySeconds, meter, fileExists)
                measured.energy?.let { log.info(EnergyRun.logLine(request.runId, it)) }
                Report.valid(request, outcome, measured, envelope(startedAt))
            } catch (e: StageException) {
                log.error("ERROR stage=${e.stage} type=${e.errorType} message=${e.message}", e.cause)
                Report.failed(request, outcome, e, envelope(startedAt))
            } finally {
                engine.release()
            }
        }
        return write(request.reportPath, report)
    }

    /**
     * Anything the protocol did not anticipate (OutOfMemoryError while building, a bug) still
     * ends in a report, with stage "internal", rather than in silence.
     */
    private fun guarded(path: String, request: BenchRequest?, build: () -> Map<String, Any?>): Map<String, Any?>? = try {
        build()
    } catch (t: Throwable) {
        log.error("ERROR stage=internal type=${t::class.java.name} message=${t.message} report=$path", t)
        try {
            linkedMapOf<String, Any?>(
                "protocol_version" to Report.PROTOCOL_VERSION, "app_version" to Report.APP_VERSION,
                "simulated" to false, "valid" to false, "error_stage" to "internal",
                "error_type" to t::class.java.name, "error_message" to (firstLine(t.message) ?: t::class.java.simpleName),
                "run_id" to request?.runId, "model_path" to request?.modelPath,
                "backend_requested" to request?.settings?.backend?.wire, "backend_used" to null,
                "runtime" to request?.runtime?.wire,
                "runtime_version" to request?.runtime?.let { runtimes.provider(it)?.version },
                "threads" to request?.settings?.threads, "warmup" to request?.settings?.warmup,
                "warmup_seconds" to request?.settings?.warmupSeconds,
                "runs" to request?.settings?.runs, "min_seconds" to request?.settings?.minSeconds,
                "seed" to request?.settings?.seed,
                "require_full_delegation" to request?.settings?.requireFullDelegation,
                "fallback_reason" to null, "started_at_ms" to wallMs(), "finished_at_ms" to wallMs(),
                "capabilities" to runtimes.capabilities(), "device" to device().toMap(),
            )
        } catch (again: Throwable) {
            log.error("cannot build even the internal-error report", again)
            null
        }
    }

    private fun envelope(startedAt: Long) = Report.Envelope(device(), startedAt, wallMs(), runtimes = runtimes)

    private fun write(path: String, report: Map<String, Any?>?): RunResult {
        if (report == null) return RunResult(null, path, false)
        return try {
            AtomicFile.write(path, Json.write(report) + "\n")
            log.info("RESULT run_id=${report["run_id"]} valid=${report["valid"]} backend_used=${report["backend_used"]} report=$path")
            RunResult(report, path, true)
        } catch (e: Exception) {
            log.error("REPORT_WRITE_FAILED report=$path type=${e::class.java.name} message=${e.message}", e)
            RunResult(report, path, false)
        }
    }
}
