package org.nnlite.bench.core

/**
 * What the energy measurement needs from the device: its battery counters, a sampler over them, and
 * a way to wait out the settle pause and the idle window (Thread.sleep on the device, the scripted
 * clock in tests). [origin] is the block's `source`: `device` from the app, `simulated` from the simulator.
 */
class EnergyMeter(val source: BatterySource, val sampler: EnergySampler, val sleepNs: (Long) -> Unit, val origin: String = "device")

/**
 * The energy windows (PROTOCOL.md, "Energy"), after the timed runs: a settle pause, an idle window of
 * `energy_seconds` with the model loaded and nothing running, then a load window of back-to-back
 * inferences for as long, the battery sampled on a side thread during both. The sampler's own cost is
 * the same in both windows, so it cancels in the difference.
 */
object EnergyRun {
    /** Every 20 ms: at least five readings per update of the fastest common counters (10 Hz). */
    const val SAMPLE_PERIOD_MS = 20L
    const val SETTLE_SECONDS = 1.0
    const val DEFAULT_SECONDS = 10.0
    const val MIN_SECONDS = 1.0
    const val MAX_SECONDS = 600.0

    fun measure(engine: Engine, clock: NanoClock, windowSeconds: Double, meter: EnergyMeter): Map<String, Any?> {
        val windowNs = (windowSeconds * 1e9).toLong()
        meter.sleepNs((SETTLE_SECONDS * 1e9).toLong())
        val sources = meter.source.sources()
        val before = meter.source.state()
        val idle = meter.sampler.sample {
            val t0 = clock.nanos()
            meter.sleepNs(windowNs)
            clock.nanos() - t0
        }
        val load = meter.sampler.sample {
            val t0 = clock.nanos()
            var n = 0
            do {
                engine.invoke()
                n++
            } while (clock.nanos() - t0 < windowNs)
            (clock.nanos() - t0) to n
        }
        val after = meter.source.state()
        val idleWindow = EnergyWindow(idle.readings, idle.value)
        val loadWindow = EnergyWindow(load.readings, load.value.first)
        val r = EnergyMath.evaluate(idleWindow, loadWindow, load.value.second, before, after, idle.error ?: load.error)
        return block(r, meter.origin, sources, windowSeconds, idleWindow, loadWindow, load.value.second, before, after)
    }

    fun block(
        r: EnergyMath.Result, origin: String, sources: CounterSources, windowSeconds: Double,
        idle: EnergyWindow, load: EnergyWindow, inferences: Int, before: BatteryState, after: BatteryState,
    ): Map<String, Any?> = linkedMapOf(
        "valid" to r.valid,
        "reason" to r.reasons.joinToString("; ") { it.second }.ifEmpty { null },
        "reason_codes" to r.reasons.map { it.first }.distinct(),
        "source" to origin,
        "counter_sources" to sources.toMap(),
        "counter" to r.counter,
        "sign_convention" to r.signConvention,
        "window_seconds" to windowSeconds,
        "settle_seconds" to SETTLE_SECONDS,
        "sample_period_ms" to SAMPLE_PERIOD_MS,
        "power_idle_mw" to r.powerIdleMw,
        "power_load_mw" to r.powerLoadMw,
        "idle_noise_mw" to r.idleNoiseMw,
        "power_delta_mw" to r.powerDeltaMw,
        "energy_per_inference_mj" to r.energyPerInferenceMj,
        "charging" to r.charging,
        "battery_before" to before.toMap(),
        "battery_after" to after.toMap(),
        "idle" to idle.toMap(r.idleVoltage),
        "load" to load.toMap(r.loadVoltage).also { it["inferences"] = inferences },
    )

    /** The one logcat line of an energy measurement (PROTOCOL.md, "Logcat"). */
    fun logLine(runId: String, block: Map<String, Any?>): String =
        "ENERGY run_id=$runId valid=${block["valid"]} counter=${block["counter"]} " +
            "energy_per_inference_mj=${block["energy_per_inference_mj"]} reason=${block["reason"]}"
}
