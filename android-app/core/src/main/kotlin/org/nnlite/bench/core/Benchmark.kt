package org.nnlite.bench.core

import java.io.File

/** A monotonic nanosecond clock (System.nanoTime on the device, a scripted one in tests). */
fun interface NanoClock {
    fun nanos(): Long
}

/** The measured part of a valid result. */
class Measured(
    val initNs: Long,
    val firstInferenceNs: Long,
    val samplesNs: LongArray,
    val timedSeconds: Double,
    val inputs: List<TensorInfo>,
    val outputs: List<TensorInfo>,
    /** The runtime's own time of each timed invoke, in the order of [samplesNs]; null if it has none. */
    val nativeSamplesNs: LongArray? = null,
    val warmupRuns: Int = 0,
    val warmupNs: Long = 0,
    val delegation: Delegation? = null,
    val memory: Map<String, Any?>? = null,
    val conditions: Map<String, Any?>? = null,
    val inputFill: List<FillRecord>? = null,
    /** The `energy` block (section 9f) when energy was asked for. */
    val energy: Map<String, Any?>? = null,
) {
    val summary: Summary by lazy { Stats.summarize(samplesNs) }
    val nativeSummary: Summary? by lazy { nativeSamplesNs?.let { Stats.summarize(it) } }
    val warmupMeanNs: Double? get() = if (warmupRuns == 0) null else warmupNs.toDouble() / warmupRuns
}

/** Which backend ran and why it is not the requested one (null if it is). */
class BackendOutcome(var used: Backend, var fallbackReason: String?)

/**
 * The benchmark protocol, the same loop as nnlite_tui.core.bench.run_benchmark: load + allocate
 * timed as init (with delegate fallback), seeded input set once, the first invoke timed, warm-up
 * invokes until both `warmup` runs and `warmup_seconds` of warm-up work are reached, then timed
 * invokes until both `runs` and `min_seconds` of timed work are reached, capped by `max_runs` and
 * `max_seconds`. Only [Engine.invoke] is inside a timed region.
 */
object Benchmark {
    /**
     * Run the protocol on [engine]. [outcome] is updated as backends are tried, so a caller that
     * catches the StageException still knows the last backend attempted and the fallback story.
     * [probe] is read before load, after load and after the runs (memory) and around the runs
     * (conditions); it never changes what is timed. With [energySeconds], the energy windows follow
     * the second conditions reading ([EnergyRun], measured through [meter]).
     */
    fun run(
        modelPath: String,
        settings: BenchSettings,
        engine: Engine,
        clock: NanoClock,
        outcome: BackendOutcome,
        probe: DeviceProbe? = null,
        energySeconds: Double? = null,
        meter: EnergyMeter? = null,
        fileExists: (String) -> Boolean = { File(it).isFile },
    ): Measured {
        require(energySeconds == null || meter != null) { "energy asked for without a battery meter" }
        if (!fileExists(modelPath)) throw StageException.protocol("load", "model file not found: $modelPath")
        val sustained = probe?.sustainedPerformance()
        val conditionsBefore = probe?.conditions()
        val memBefore = probe?.memory()
        val initNs = load(modelPath, settings, engine, clock, outcome)
        val memLoaded = probe?.memory()
        val delegation = engine.delegation()
        if (settings.requireFullDelegation && settings.backend != Backend.CPU) {
            delegation.fullDelegationFailure(outcome.used)?.let { throw StageException.protocol("load", it) }
        }

        val inputs: List<TensorInfo>
        val outputs: List<TensorInfo>
        val firstNs: Long
        val samples: LongArray
        var native: LongArray? = null
        var count = 0
        var timedTotal = 0L
        var warmupRuns = 0
        var warmupTotal = 0L
        var inputFill: List<FillRecord>? = null
        try {
            inputs = engine.inputs()
            if (settings.inputRanges.isNotEmpty() && settings.inputRanges.size != inputs.size) {
                throw StageException.protocol("invoke",
                    "${settings.inputRanges.size} input ranges given for a model of ${inputs.size} inputs")
            }
            engine.prepareInputs(settings.seed, settings.inputRanges)
            inputFill = engine.inputFill()
            var t0 = clock.nanos()
            engine.invoke()
            firstNs = clock.nanos() - t0
            // After one inference: ExecuTorch's Java API shows a program's outputs only in forward's result.
            outputs = engine.outputs()
            val warmupNs = (settings.warmupSeconds * 1e9).toLong()
            val minNs = (settings.minSeconds * 1e9).toLong()
            val capNs = (settings.maxSeconds * 1e9).toLong()
            // Warm-up by count and by time, as benchmark_model's --warmup_runs/--warmup_min_secs;
            // the time part is capped by max_seconds so that a huge warmup_seconds cannot hang.
            while (warmupRuns < settings.warmup || (warmupTotal < warmupNs && warmupTotal < capNs)) {
                t0 = clock.nanos()
                engine.invoke()
                warmupTotal += clock.nanos() - t0
                warmupRuns++
            }
            var buffer = LongArray(minOf(settings.maxRuns, maxOf(settings.runs, 1024)))
            var nativeBuffer: LongArray? = LongArray(buffer.size)
            while (true) {
                if (count == buffer.size) {
                    buffer = buffer.copyOf(minOf(settings.maxRuns, buffer.size * 2))
                    nativeBuffer = nativeBuffer?.copyOf(buffer.size)
                }
                t0 = clock.nanos()
                engine.invoke()
                val dt = clock.nanos() - t0
                // Read after the wall clock stopped: the native figure is the runtime's, not ours.
                val nativeNs = if (nativeBuffer != null) engine.lastNativeNs() else null
                if (nativeNs == null) nativeBuffer = null else nativeBuffer!![count] = nativeNs
                buffer[count++] = dt
                timedTotal += dt
                if (count >= settings.maxRuns || timedTotal >= capNs) break
                if (count >= settings.runs && timedTotal >= minNs) break
            }
            samples = buffer.copyOf(count)
            native = nativeBuffer?.copyOf(count)
        } catch (e: StageException) {
            throw e
        } catch (e: Exception) {
            throw StageException.of("invoke", e)
        } catch (e: LinkageError) {
            throw StageException.of("invoke", e)
        }
        val conditionsAfter = probe?.conditions()
        val memAfter = probe?.memory()
        val energy = energySeconds?.let { seconds ->
            try {
                EnergyRun.measure(engine, clock, seconds, meter!!)
            } catch (e: StageException) {
                throw e
            } catch (e: Exception) {
                throw StageException.of("invoke", e)
            } catch (e: LinkageError) {
                throw StageException.of("invoke", e)
            }
        }
        engine.runtimeFallback()?.let { (ran, why) ->
            outcome.fallbackReason = listOfNotNull(outcome.fallbackReason, "${outcome.used.wire} -> ${ran.wire}: $why")
                .joinToString("; ")
            outcome.used = ran
        }
        val memory = if (probe == null) null else linkedMapOf(
            "source" to "device",
            "before_load" to memBefore?.toMap(),
            "after_load" to memLoaded?.toMap(),
            "after_runs" to memAfter?.toMap(),
        )
        val conditions = if (probe == null) null else Conditions.block(conditionsBefore!!, conditionsAfter, sustained!!)
        return Measured(
            initNs, firstNs, samples, timedTotal / 1e9, inputs, outputs,
            nativeSamplesNs = native, warmupRuns = warmupRuns, warmupNs = warmupTotal,
            delegation = delegation, memory = memory, conditions = conditions, inputFill = inputFill, energy = energy,
        )
    }

    /** Load + allocate along the fallback chain; returns init_ns of the attempt that succeeded. */
    private fun load(modelPath: String, settings: BenchSettings, engine: Engine, clock: NanoClock, outcome: BackendOutcome): Long {
        val chain = Backend.fallbackChain(settings.backend)
        val reasons = mutableListOf<String>()
        for ((i, backend) in chain.withIndex()) {
            val last = i == chain.size - 1
            outcome.used = backend
            var stage = "load"
            try {
                val t0 = clock.nanos()
                engine.load(modelPath, backend, settings.threads)
                stage = "allocate"
                engine.allocate()
                val initNs = clock.nanos() - t0
                outcome.fallbackReason = reasons.joinToString("; ").ifEmpty { null }
                return initNs
            } catch (e: Throwable) {
                // A delegate whose native library or classes are missing (UnsatisfiedLinkError,
                // NoClassDefFoundError) is a LinkageError, not an Exception: it must fall back too.
                if (e !is Exception && e !is LinkageError) throw e
                val releaseNote = releaseQuietly(engine)?.let { " ($it)" } ?: ""
                val err = if (e is StageException) e else StageException.of(stage, e)
                if (last) throw err
                reasons += "${backend.wire} -> ${chain[i + 1].wire}: $stage failed: ${err.errorType}: ${err.message}$releaseNote"
                outcome.fallbackReason = reasons.joinToString("; ")
            }
        }
        throw IllegalStateException("empty fallback chain") // unreachable: every chain has a backend
    }

    /** Releasing a half-built attempt can itself hit the missing library; that must not stop the fallback. */
    private fun releaseQuietly(engine: Engine): String? = try {
        engine.release()
        null
    } catch (e: Exception) {
        "release failed: ${e::class.java.name}: ${firstLine(e.message)}"
    } catch (e: LinkageError) {
        "release failed: ${e::class.java.name}: ${firstLine(e.message)}"
    }
}
