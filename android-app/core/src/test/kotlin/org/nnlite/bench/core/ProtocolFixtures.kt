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
    fun case(name: String, engine: (ScriptedClock) -> Engine, modelExists: Boolean = true, vararg extras: Pair<String, Any?>,
             probe: DeviceProbe? = FakeProbe(), energy: ((ScriptedClock) -> EnergyMeter)? = null) {
        val clock = ScriptedClock()
        var wall = 1_760_000_000_000L
        val base = mapOf<String, Any?>(
            "model_path" to "/data/local/tmp/nnlite/tiny.tflite",
            "report_path" to File(reports, "$name.json").path,
            "run_id" to "fixture-$name", "warmup" to 2, "runs" to 5, "min_seconds" to 0.0f, "warmup_seconds" to 0.0f,
        )
        val merged = (base + extras).filterValues { it != REMOVE }
        // The runtimes of the real app build (AppRuntimes), over scripted engines.
        val made = engine(clock)
        val runtimes = Runtimes(listOf(
            RuntimeProvider(Runtime.LITERT, FIXTURE_VERSIONS.getValue("litert")) { made },
            RuntimeProvider(Runtime.EXECUTORCH, FIXTURE_VERSIONS.getValue("executorch")) { made },
        ))
        BenchRunner(runtimes, { TEST_DEVICE }, log, clock, { wall += 7; wall }, { modelExists }, probe, energy?.invoke(clock)).execute(merged)
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
    // a captioning model: an image and 12 token ids of a 50-word vocabulary, told as input_ranges
    val captioning = listOf(TensorInfo(listOf(1, 8, 8, 3), "float32", 768), TensorInfo(listOf(1, 12), "int32", 48))
    case("token-ranges", { c -> FakeEngine(c, inputs = captioning) }, true, "input_ranges" to "[null,[0,50]]")
    val spec = listOf(TensorInfo(listOf(1, 3, 8, 8), "float32", 768))
    val pte = mapOf("model_path" to "/data/local/tmp/nnlite/tiny.pte", "runtime" to "executorch", "input_shapes" to "[[1,3,8,8]]",
        "input_dtypes" to "[\"float32\"]").toList().toTypedArray()
    val executorch = { c: ScriptedClock -> FakeExecuTorch(FakeEngine(c, inputs = spec, nativeFraction = null), spec) }
    case("executorch-valid", executorch, true, *pte)
    case("executorch-portable-kernels", { c -> FakeExecuTorch(FakeEngine(c, inputs = spec, nativeFraction = null), spec, emptyList()) }, true, *pte)
    case("executorch-load-error", { c -> FakeExecuTorch(FakeEngine(c, inputs = spec, nativeFraction = null, failLoad = mapOf(Backend.XNNPACK to
        IllegalStateException("[ExecuTorch Error 0x23] Invalid program: Failed to create Module"))), spec) }, true, *pte)
    case("args-error-unknown-runtime", jitter, true, "runtime" to "tflite")
    case("args-error-executorch-without-shapes", jitter, true, "runtime" to "executorch")
    val idle = trace(5.0, current = alternating(-200_000, 10_000))
    val load = trace(5.0, current = alternating(-700_000, 10_000))
    val energyExtras = arrayOf<Pair<String, Any?>>("energy" to true, "energy_seconds" to 5.0f)
    val fiveMs = { c: ScriptedClock -> FakeEngine(c, invokeNs = 5_000_000) }
    case("energy-valid", fiveMs, true, *energyExtras, energy = { c -> scriptedMeter(c, idle, load).first })
    case("energy-charging", fiveMs, true, *energyExtras, energy = { c ->
        val usb = BatteryState(1_760_000_000_000L, 81.0, 30.5, 4010, 2, 2)
        scriptedMeter(c, idle, load, ScriptedBattery(ArrayDeque(listOf(usb, usb)))).first
    })
    case("energy-constant-counters", fiveMs, true, *energyExtras, energy = { c ->
        scriptedMeter(c, trace(5.0, current = { -300_000L }), trace(5.0, current = { -300_000L })).first
    })
    case("energy-executorch", executorch, true, *pte, *energyExtras, energy = { c -> scriptedMeter(c, idle, load).first })
    writeEnergy(File(out, "energy.json"))
    writeLoops(File(out, "loops.json"))
    writeProtocol(File(out, "protocol.json"))
    println("fixtures: ${stats.size} stat sets, ${reports.listFiles { f -> f.name.endsWith(".json") }!!.size} reports in $out")
}

private val REMOVE = Any()

/** The versions the app build packages (AppRuntimes, gradle/libs.versions.toml; tests/android checks all three agree). */
val FIXTURE_VERSIONS = mapOf("litert" to "1.4.2", "executorch" to "1.5.1")

/**
 * Energy arithmetic cases (traces, broadcasts, window lengths, inferences) with the core's result, for
 * the simulator's and the host's implementation of section 9f to reproduce exactly.
 */
private fun writeEnergy(file: File) {
    fun window(r: List<BatteryReading>) = r.map { linkedMapOf("at_ns" to it.atNs, "current_ua" to it.currentUa, "charge_uah" to it.chargeUah, "voltage_uv" to it.voltageUv) }
    val usb = BatteryState(1L, 80.0, 30.0, 4000, 2, 2)
    val cases = linkedMapOf<String, Any?>()
    fun case(name: String, idle: List<BatteryReading>, load: List<BatteryReading>, inferences: Int = 1000,
             before: BatteryState = onBattery(), after: BatteryState = onBattery(), error: String? = null) {
        val windowNs = 5_000_000_000L
        val iw = EnergyWindow(idle, windowNs)
        val lw = EnergyWindow(load, windowNs)
        val r = EnergyMath.evaluate(iw, lw, inferences, before, after, error)
        val block = EnergyRun.block(r, "device", CounterSources("a", "b", "c"), 5.0, iw, lw, inferences, before, after)
        cases[name] = linkedMapOf(
            "idle" to window(idle), "load" to window(load), "idle_ns" to windowNs, "load_ns" to windowNs, "inferences" to inferences,
            "battery_before" to before.toMap(), "battery_after" to after.toMap(), "read_error" to error,
            "expected" to block.filterKeys { it !in setOf("counter_sources", "battery_before", "battery_after") },
        )
    }
    val idle = trace(5.0, current = alternating(-200_000, 10_000))
    val load = trace(5.0, current = alternating(-700_000, 10_000))
    case("current-negative", idle, load)
    case("current-positive", trace(5.0, current = alternating(200_000, 10_000)), trace(5.0, current = alternating(700_000, 10_000)))
    case("current-jittered", trace(5.0, current = { i -> -200_000L - (i * 7919L % 23_000) }, voltage = { i -> 3_950_000L + i % 7 * 1000 }),
        trace(5.0, current = { i -> -650_000L - (i * 104_729L % 61_000) }, voltage = { i -> 3_900_000L + i % 5 * 1000 }), inferences = 777)
    case("charge-counter", trace(5.0, current = { -1L }, charge = falling(10, 9)), trace(5.0, current = { -1L }, charge = falling(35, 9)))
    case("charging", idle, load, before = usb)
    case("charging-unknown", idle, load, after = BatteryState(1L, null, null, null, null, null))
    case("constant", trace(5.0, current = { -300_000L }, charge = { 2_000_000L }), trace(5.0, current = { -300_000L }, charge = { 2_000_000L }))
    case("no-counter", trace(5.0), trace(5.0))
    case("too-few-readings", trace(0.08, current = alternating(-200_000, 10_000, every = 1)), load)
    case("too-few-updates", trace(5.0, current = alternating(-200_000, 10_000, every = 75)), load)
    case("noisy-idle", trace(5.0, current = alternating(-300_000, 200_000)), trace(5.0, current = alternating(-400_000, 10_000)))
    case("sign-undetermined", trace(5.0, current = alternating(50_000, 10_000)), load)
    case("broadcast-voltage", trace(5.0, current = alternating(-200_000, 10_000), voltage = null),
        trace(5.0, current = alternating(-700_000, 10_000), voltage = null), before = onBattery(voltageMv = 3900), after = onBattery(voltageMv = 4100))
    case("no-voltage", trace(5.0, current = alternating(-200_000, 10_000), voltage = null),
        trace(5.0, current = alternating(-700_000, 10_000), voltage = null), before = onBattery(voltageMv = null), after = onBattery(voltageMv = null))
    case("read-failed", idle, load, error = "java.lang.SecurityException: denied")
    AtomicFile.write(file.path, Json.write(cases) + "\n")
}

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
        "runtimes" to Runtime.values().associate { r -> r.wire to linkedMapOf("backends" to r.backends.map { it.wire },
            "version" to FIXTURE_VERSIONS.getValue(r.wire), "wall_clock" to Report.WALL_CLOCKS.getValue(r)) },
        "runtime_defaults" to linkedMapOf("runtime" to Runtime.LITERT.wire, "energy" to false, "energy_seconds" to EnergyRun.DEFAULT_SECONDS),
        "executorch_input_dtypes" to InputSpec.EXECUTORCH_DTYPES,
        "energy" to linkedMapOf(
            "seconds_range" to listOf(EnergyRun.MIN_SECONDS, EnergyRun.MAX_SECONDS), "settle_seconds" to EnergyRun.SETTLE_SECONDS,
            "sample_period_ms" to EnergyRun.SAMPLE_PERIOD_MS, "min_readings" to EnergyMath.MIN_READINGS,
            "min_updates" to EnergyMath.MIN_UPDATES, "reason_codes" to EnergyMath.REASON_CODES,
        ),
    )
    AtomicFile.write(file.path, Json.write(doc) + "\n")
}
