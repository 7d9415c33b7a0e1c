package org.nnlite.bench.core

/** A battery broadcast on battery power (not plugged, discharging), 4.0 V, 80 %, 31.5 °C. */
fun onBattery(atMs: Long = 1_760_000_000_000L, voltageMv: Long? = 4000) = BatteryState(atMs, 80.0, 31.5, voltageMv, 0, 3)

/**
 * A scripted trace: one reading every [periodMs] for [seconds] (both ends included), the value of
 * each counter computed from the reading's index (null: counter not readable).
 */
fun trace(
    seconds: Double,
    periodMs: Long = 20,
    startNs: Long = 0,
    current: ((Int) -> Long?)? = null,
    charge: ((Int) -> Long?)? = null,
    voltage: ((Int) -> Long?)? = { 4_000_000L },
): List<BatteryReading> {
    val n = Math.round(seconds * 1000 / periodMs).toInt()
    return (0..n).map { i ->
        BatteryReading(startNs + i * periodMs * 1_000_000, current?.invoke(i), charge?.invoke(i), voltage?.invoke(i))
    }
}

/** A current that alternates between [mean] - [swing] and [mean] + [swing], changing every [every] readings. */
fun alternating(mean: Long, swing: Long, every: Int = 5): (Int) -> Long = { i -> if ((i / every) % 2 == 0) mean + swing else mean - swing }

/** A charge counter that falls by [step] µAh every [every] readings, from [start]. */
fun falling(step: Long, every: Int, start: Long = 3_000_000): (Int) -> Long = { i -> start - step * (i / every) }

/** Battery counters whose sample() calls return the next scripted window; the body still runs (and moves the clock). */
class ScriptedSampler(private val windows: ArrayDeque<List<BatteryReading>>, private val errors: ArrayDeque<String?> = ArrayDeque()) : EnergySampler {
    var calls = 0

    override fun <T> sample(body: () -> T): Sampled<T> {
        calls++
        val value = body()
        return Sampled(value, windows.removeFirst(), errors.removeFirstOrNull())
    }
}

/** The battery broadcast before and after, in order; counters named as the app would name them. */
class ScriptedBattery(
    private val states: ArrayDeque<BatteryState> = ArrayDeque(listOf(onBattery(), onBattery())),
    private val sources: CounterSources = CounterSources("BatteryManager.BATTERY_PROPERTY_CURRENT_NOW",
        "BatteryManager.BATTERY_PROPERTY_CHARGE_COUNTER", "/sys/class/power_supply/battery/voltage_now"),
) : BatterySource {
    var reads = 0

    override fun sources() = sources

    override fun read(atNs: Long): BatteryReading {
        reads++
        return BatteryReading(atNs, -200_000L - reads, null, 4_000_000)
    }

    override fun state(): BatteryState = states.removeFirst()
}

/** A meter over scripted windows whose waits move the scripted clock. */
fun scriptedMeter(clock: ScriptedClock, idle: List<BatteryReading>, load: List<BatteryReading>,
                  battery: ScriptedBattery = ScriptedBattery()): Pair<EnergyMeter, ScriptedSampler> {
    val sampler = ScriptedSampler(ArrayDeque(listOf(idle, load)))
    return EnergyMeter(battery, sampler, { ns -> clock.now += ns }) to sampler
}

/**
 * An engine that behaves as ExecuTorch's Module does for the protocol: inputs from the host's spec,
 * outputs known only once forward ran, no native timer, the method's backends instead of a delegate log.
 */
class FakeExecuTorch(
    private val inner: FakeEngine,
    private val spec: List<TensorInfo>,
    private val backends: List<String> = listOf(ExecuTorchFacts.XNNPACK_BACKEND),
) : Engine by inner {
    override fun inputs() = spec

    override fun outputs(): List<TensorInfo> {
        check(inner.invokes > 0) { "outputs before the first forward" }
        return listOf(TensorInfo(listOf(1, 10), "float32", 40))
    }

    override fun lastNativeNs(): Long? = null

    override fun delegation() = ExecuTorchFacts.delegation(backends)

    override fun runtimeFallback() = ExecuTorchFacts.fallback(backends)
}
