package org.nnlite.bench.core

import java.io.File

/**
 * Writes what the Python tests (tests/android/) check the core against, run by test-core.sh:
 *   --samples FILE  JSON {"sets": {name: [ns, ...]}} -> OUT/stats.json {name: stats}
 *   --out DIR       OUT/reports/<case>.json: reports built by the real BenchRunner over a
 *                   scripted engine, one per outcome, for validation against report.schema.json;
 *                   OUT/loops.json: the protocol loop over scripted invoke times (Python replays
 *                   the same script through bench.run_benchmark); OUT/protocol.json: the
 *                   constants the core implements (extras and defaults, backends, stages).
 */
fun main(args: Array<String>) {
    val opts = args.toList().chunked(2).associate { (k, v) -> k to v }
    val samples = File(opts["--samples"] ?: error("--samples FILE required"))
    val out = File(opts["--out"] ?: error("--out DIR required"))
    out.mkdirs()

    @Suppress("UNCHECKED_CAST")
    val sets = (Json.parse(samples.readText()) as Map<String, Any?>)["sets"] as Map<String, List<Long>>
    val stats = sets.mapValues { (_, xs) -> Stats.summarize(xs.toLongArray()).toMap() }
    AtomicFile.write(File(out, "stats.json").path, Json.write(stats) + "\n")

    val reports = File(out, "reports")
    reports.mkdirs()
    val log = object : BenchLog {
        override fun info(message: String) {}
        override fun error(message: String, error: Throwable?) {}
    }
    fun case(name: String, engine: (ScriptedClock) -> Engine, modelExists: Boolean = true, vararg extras: Pair<String, Any?>, probe: DeviceProbe? = FakeProbe()) {
        val clock = ScriptedClock()
        var wall = 1_760_000_000_000L
        val base = mapOf<String, Any?>(
            "model_path" to "/data/local/tmp/nnlite/tiny.tflite",
            "report_path" to File(reports, "$name.json").path,
            "run_id" to "fixture-$name", "warmup" to 2, "runs" to 5, "min_seconds" to 0.0f, "warmup_seconds" to 0.0f,
        )
        val merged = (base + extras).filterValues { it != REMOVE }
        BenchRunner(engine(clock), { TEST_DEVICE }, log, clock, { wall += 7; wall }, { modelExists }, probe).execute(merged)
    }
    val jitter = { c: ScriptedClock -> FakeEngine(c, invokeScript = ArrayDeque(listOf(2_100_000L, 1_900_000L, 2_000_000L, 2_400_000L, 1_950_000L, 2_050_000L, 2_300_000L, 1_980_000L, 2_020_000L))) }
    case("valid", jitter)
    case("valid-cpu-4-threads", jitter, true, "backend" to "cpu", "threads" to 4)
    case("gpu-fallback", { c -> FakeEngine(c, failLoad = mapOf(Backend.GPU to IllegalArgumentException("Internal error: Failed to apply delegate: OpenCL library not loaded"))) }, true, "backend" to "gpu")
    case("nnapi-runtime-fallback", { c -> FakeEngine(c, runtimeFallback = Backend.CPU to "NnApiDelegate reported NNAPI errno 4 after the timed runs") }, true, "backend" to "nnapi")
    case("load-error-missing-model", jitter, false)
    case("load-error-unsupported-op", { c -> FakeEngine(c, failLoad = mapOf(Backend.XNNPACK to IllegalArgumentException("Internal error: Cannot create interpreter: Didn't find op for builtin opcode 'STABLEHLO_SORT' version '1'"))) })
    case("invoke-error", { c -> FakeEngine(c, failInvokeAt = 0) })
    case("args-error-bad-values", jitter, true, "runs" to "abc", "backend" to "tpu")
    case("args-error-missing-model", jitter, true, "model_path" to REMOVE)
    case("throttled", jitter, true, probe = FakeProbe(statuses = ArrayDeque(listOf(0, 3)), headroom = 1.2))
    case("no-native-timing-no-thermal", { c -> FakeEngine(c, nativeFraction = null) }, true, probe = FakeProbe(statuses = ArrayDeque(listOf(null, null)), headroom = null, sustainedSupported = null))
    case("gpu-missing-native-library", { c -> FakeEngine(c, failLoad = mapOf(Backend.GPU to UnsatisfiedLinkError("dlopen failed: library \"libtensorflowlite_gpu_jni.so\" not found"))) }, true, "backend" to "gpu")
    case("partial-delegation-required-full", { c -> FakeEngine(c, delegateLog = mapOf(Backend.GPU to listOf("Replacing 12 out of 15 node(s) with delegate (TfLiteGpuDelegateV2) node, yielding 2 partitions for the whole graph."))) }, true, "backend" to "gpu", "require_full_delegation" to true)
    writeLoops(File(out, "loops.json"))
    writeProtocol(File(out, "protocol.json"))
    println("fixtures: ${stats.size} stat sets, ${reports.listFiles { f -> f.name.endsWith(".json") }!!.size} reports in $out")
}

private val REMOVE = Any()

/** Loop cases: settings plus the invoke durations the engine will take, in call order. */
val LOOP_CASES: Map<String, Pair<BenchSettings, List<Long>>> = linkedMapOf(
    "runs-reached" to (BenchSettings(warmup = 3, runs = 10, minSeconds = 0.0, warmupSeconds = 0.0) to List(40) { 2_000_000L }),
    "min-seconds-extends" to (BenchSettings(warmup = 1, runs = 5, minSeconds = 0.2, warmupSeconds = 0.0) to List(40) { 10_000_000L }),
    "max-runs-caps" to (BenchSettings(warmup = 0, runs = 5, minSeconds = 10.0, maxRuns = 7, warmupSeconds = 0.0) to List(20) { 1_000L }),
    "max-seconds-caps" to (BenchSettings(warmup = 2, runs = 50, maxSeconds = 1.0, warmupSeconds = 0.0) to List(20) { 400_000_000L }),
    "warmup-by-time" to (BenchSettings(warmup = 1, runs = 3, minSeconds = 0.0, warmupSeconds = 0.05) to List(20) { 10_000_000L }),
    "warmup-time-capped" to (BenchSettings(warmup = 0, runs = 2, minSeconds = 0.0, maxSeconds = 0.03, warmupSeconds = 5.0) to List(20) { 10_000_000L }),
    "uneven" to (BenchSettings(warmup = 2, runs = 4, minSeconds = 0.05, warmupSeconds = 0.0) to
        listOf(50_000_000L, 7L, 8L, 30_000_000L, 1_000_000L, 20_000_000L, 45_000_000L, 3L, 9L, 11L, 13L, 17L)),
)

private fun writeLoops(file: File) {
    val result = LOOP_CASES.mapValues { (_, case) ->
        val (settings, script) = case
        val clock = ScriptedClock()
        val engine = FakeEngine(clock, invokeScript = ArrayDeque(script))
        val m = Benchmark.run("/m.tflite", settings, engine, clock, BackendOutcome(settings.backend, null), null) { true }
        linkedMapOf(
            "settings" to linkedMapOf(
                "warmup" to settings.warmup, "runs" to settings.runs, "min_seconds" to settings.minSeconds,
                "max_runs" to settings.maxRuns, "max_seconds" to settings.maxSeconds,
                "warmup_seconds" to settings.warmupSeconds,
            ),
            "invoke_ns" to script,
            "first_inference_ns" to m.firstInferenceNs,
            "samples_ns" to m.samplesNs.asList(),
            "timed_seconds" to m.timedSeconds,
            "warmup_runs" to m.warmupRuns,
            "warmup_mean_ns" to m.warmupMeanNs,
        )
    }
    AtomicFile.write(file.path, Json.write(result) + "\n")
}

private fun writeProtocol(file: File) {
    val d = BenchSettings()
    val doc = linkedMapOf(
        "protocol_version" to Report.PROTOCOL_VERSION,
        "app_version" to Report.APP_VERSION,
        "required_extras" to listOf(BenchArgs.MODEL_PATH, BenchArgs.REPORT_PATH, BenchArgs.RUN_ID),
        "extras" to BenchArgs.KNOWN_KEYS.sorted(),
        "defaults" to linkedMapOf(
            "warmup" to d.warmup, "runs" to d.runs, "min_seconds" to d.minSeconds, "max_runs" to d.maxRuns,
            "max_seconds" to d.maxSeconds, "threads" to d.threads, "backend" to d.backend.wire, "seed" to d.seed,
            "warmup_seconds" to d.warmupSeconds, "require_full_delegation" to d.requireFullDelegation,
        ),
        "backends" to Backend.values().map { it.wire },
        "fallback" to Backend.values().associate { b -> b.wire to Backend.fallbackChain(b).map { it.wire } },
        "stages" to Report.STAGES,
    )
    AtomicFile.write(file.path, Json.write(doc) + "\n")
}
