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
) {
    val summary: Summary by lazy { Stats.summarize(samplesNs) }
}

/** Which backend ran and why it is not the requested one (null if it is). */
class BackendOutcome(var used: Backend, var fallbackReason: String?)

/**
 * The benchmark protocol, the same loop as nnlite_tui.core.bench.run_benchmark: load + allocate
 * timed as init (with delegate fallback), seeded input set once, the first invoke timed, `warmup`
 * untimed invokes, then timed invokes until both `runs` and `min_seconds` of timed work are
 * reached, capped by `max_runs` and `max_seconds`. Only [Engine.invoke] is inside a timed region.
 */
object Benchmark {
    /**
     * Run the protocol on [engine]. [outcome] is updated as backends are tried, so a caller that
     * catches the StageException still knows the last backend attempted and the fallback story.
     */
    fun run(
        modelPath: String,
        settings: BenchSettings,
        engine: Engine,
        clock: NanoClock,
        outcome: BackendOutcome,
        fileExists: (String) -> Boolean = { File(it).isFile },
    ): Measured {
        if (!fileExists(modelPath)) throw StageException.protocol("load", "model file not found: $modelPath")
        val initNs = load(modelPath, settings, engine, clock, outcome)

        val inputs: List<TensorInfo>
        val outputs: List<TensorInfo>
        val firstNs: Long
        val samples: LongArray
        var count = 0
        var timedTotal = 0L
        try {
            inputs = engine.inputs()
            outputs = engine.outputs()
            engine.prepareInputs(settings.seed)
            var t0 = clock.nanos()
            engine.invoke()
            firstNs = clock.nanos() - t0
            repeat(settings.warmup) { engine.invoke() }
            val minNs = (settings.minSeconds * 1e9).toLong()
            val capNs = (settings.maxSeconds * 1e9).toLong()
            var buffer = LongArray(minOf(settings.maxRuns, maxOf(settings.runs, 1024)))
            while (true) {
                if (count == buffer.size) buffer = buffer.copyOf(minOf(settings.maxRuns, buffer.size * 2))
                t0 = clock.nanos()
                engine.invoke()
                val dt = clock.nanos() - t0
                buffer[count++] = dt
                timedTotal += dt
                if (count >= settings.maxRuns || timedTotal >= capNs) break
                if (count >= settings.runs && timedTotal >= minNs) break
            }
            samples = buffer.copyOf(count)
        } catch (e: StageException) {
            throw e
        } catch (e: Exception) {
            throw StageException.of("invoke", e)
        }
        engine.runtimeFallback()?.let { (ran, why) ->
            outcome.fallbackReason = listOfNotNull(outcome.fallbackReason, "${outcome.used.wire} -> ${ran.wire}: $why")
                .joinToString("; ")
            outcome.used = ran
        }
        return Measured(initNs, firstNs, samples, timedTotal / 1e9, inputs, outputs)
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
            } catch (e: Exception) {
                engine.release()
                val err = if (e is StageException) e else StageException.of(stage, e)
                if (last) throw err
                reasons += "${backend.wire} -> ${chain[i + 1].wire}: $stage failed: ${err.errorType}: ${err.message}"
                outcome.fallbackReason = reasons.joinToString("; ")
            }
        }
        throw IllegalStateException("empty fallback chain") // unreachable: every chain has a backend
    }
}
